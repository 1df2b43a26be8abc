/** Options: read with defaults; patch range-checked by domain/options.ts, merged under a row lock. */
import { transaction } from '../../db/tx.ts';
import { getOptions, patchOptions } from '../../db/options.ts';
import { optionsPatchSchema, type Options } from '../../domain/options.ts';
import { zodIssues } from '../../domain/validation.ts';
import { badInput } from '../errors.ts';
import { optionsView, snake } from '../views.ts';
import type { Resolvers } from '../generated/types.ts';

const camel = (k: PropertyKey) => String(k).replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

export const optionResolvers: Resolvers = {
  Query: {
    options: async (_p, _a, ctx) => optionsView(await getOptions(ctx.db)),
  },
  Mutation: {
    patchOptions: async (_p, { patch }, ctx) => {
      const given = Object.fromEntries(
        Object.entries(patch)
          .filter(([, v]) => v != null)
          .map(([k, v]) => [snake(k), v]),
      );
      const r = optionsPatchSchema.safeParse(given);
      if (!r.success) throw badInput(zodIssues(r.error, 'patch', (path) => path.map(camel)));
      const next = await transaction(ctx.db, (tx) => patchOptions(tx, r.data as Partial<Options>));
      return optionsView(next);
    },
  },
};
