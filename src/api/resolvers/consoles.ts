/**
 * Node consoles in GraphQL: nodeConsole, Explanation.consoleTail and Component.consoleTail (checked per
 * caller, as the console is).
 */
import DataLoader from 'dataloader';
import { authzError } from '../../auth/errors.ts';
import { getOptions } from '../../db/options.ts';
import { parseComponentId } from '../../domain/xname.ts';
import { consoleAccess, consoleTail, consoleTails, readConsole } from '../../consoles/read.ts';
import { badInput } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';

/** At most this many lines in one answer's `lines`. */
const MAX_LINES = 100_000;

async function mayRead(ctx: ApiContext) {
  return consoleAccess(ctx.auth?.principal, await getOptions(ctx.db));
}

/** Per request and line count: the components of one answer are read in one statement (null: may not read). */
const tailLoaders = new WeakMap<ApiContext, Map<number, DataLoader<string, string[] | null>>>();

function tailLoader(ctx: ApiContext, lines: number): DataLoader<string, string[] | null> {
  let byLines = tailLoaders.get(ctx);
  if (!byLines) tailLoaders.set(ctx, (byLines = new Map()));
  let loader = byLines.get(lines);
  if (!loader) {
    loader = new DataLoader(async (ids: readonly string[]) => {
      if (!(await mayRead(ctx)).ok) return ids.map(() => null);
      const tails = await consoleTails(ctx.db, ids, lines);
      return ids.map((id) => tails.get(id) ?? []);
    });
    byLines.set(lines, loader);
  }
  return loader;
}

/** At most this many lines in a component's consoleTail. */
const MAX_TAIL_LINES = 100;

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
  Component: {
    consoleTail: async (c, args, ctx) => {
      const lines = args.lines ?? 5;
      if (!(Number.isInteger(lines) && lines >= 1 && lines <= MAX_TAIL_LINES))
        throw badInput([{ field: 'lines', message: `must be between 1 and ${MAX_TAIL_LINES}` }]);
      return tailLoader(ctx, lines).load(c.id);
    },
  },
};
