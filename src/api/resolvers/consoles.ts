/** Node consoles in GraphQL: nodeConsole, and Explanation.consoleTail (checked per caller, as the console is). */
import { authzError } from '../../auth/errors.ts';
import { getOptions } from '../../db/options.ts';
import { parseComponentId } from '../../domain/xname.ts';
import { consoleAccess, consoleTail, readConsole } from '../../consoles/read.ts';
import { badInput } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';

/** At most this many lines in one answer's `lines`. */
const MAX_LINES = 100_000;

async function mayRead(ctx: ApiContext) {
  return consoleAccess(ctx.auth?.principal, await getOptions(ctx.db));
}

export const consoleResolvers: Resolvers = {
  Query: {
    nodeConsole: async (_p, args, ctx) => {
      const access = await mayRead(ctx);
      if (!access.ok) throw authzError(access);
      const id = parseComponentId(args.componentId);
      if ('error' in id) throw badInput([{ field: 'componentId', message: id.error }]);
      const after = args.after == null ? undefined : Number(args.after);
      if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0))
        throw badInput([{ field: 'after', message: 'must be a cursor from an earlier answer' }]);
      if (args.lines != null && (args.lines < 1 || args.lines > MAX_LINES))
        throw badInput([{ field: 'lines', message: `must be between 1 and ${MAX_LINES}` }]);
      const c = await readConsole(ctx.db, id.id, {
        attempt: args.attempt == null ? undefined : new Date(args.attempt),
        after,
        lines: args.lines ?? undefined,
        search: args.search ?? undefined,
      });
      return c && { ...c, cursor: String(c.cursor) };
    },
  },
  Explanation: {
    consoleTail: async (e, _a, ctx) => ((await mayRead(ctx)).ok ? consoleTail(ctx.db, e.componentId) : null),
  },
};
