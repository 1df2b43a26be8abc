/** releaseQuarantine and the quarantine explain shows (domain/quarantine.ts, docs/quarantine.md). */
import { getOptions } from '../../db/options.ts';
import { existingComponents } from '../../db/components/read.ts';
import { releaseQuarantined } from '../../db/components/quarantine.ts';
import { visibleIds } from '../../db/tenants.ts';
import { transaction } from '../../db/tx.ts';
import { checkComponentIds } from '../../domain/components.ts';
import { quarantineWords } from '../../domain/quarantine.ts';
import { notFound, valueOrThrow } from '../errors.ts';
import { quarantineNow } from '../explain.ts';
import type { Resolvers } from '../generated/types.ts';

const MAX_IDS = 10_000;

export const quarantineResolvers: Resolvers = {
  Mutation: {
    releaseQuarantine: async (_p, { ids: raw }, ctx) => {
      await ctx.requireKnownTenant();
      const ids = [...new Set(valueOrThrow(checkComponentIds(raw, 'ids', MAX_IDS)))];
      const released = await transaction(ctx.db, async (tx) => {
        const visible = await visibleIds(tx, ctx.tenant, ids);
        const existing = await existingComponents(tx, [...visible]);
        const bad = ids.filter((id) => !existing.has(id));
        if (bad.length) throw notFound('component', bad.slice(0, 10).join(',') + (bad.length > 10 ? '...' : ''));
        return releaseQuarantined(tx, ids, (await getOptions(tx)).quarantine_after_failed_sessions, ctx.actor);
      });
      const done = new Set(released);
      ctx.logger?.info({ released: released.length, by: ctx.actor }, 'nodes released from quarantine');
      return { released, notQuarantined: ids.filter((id) => !done.has(id)).sort() };
    },
  },
  Explanation: {
    quarantine: async (p, _a, ctx) => {
      const q = await quarantineNow(ctx.db, p.componentId, await getOptions(ctx.db));
      if (!q) return null;
      return {
        since: q.since,
        failedSessions: q.failedSessions,
        threshold: q.threshold,
        failures: q.failures,
        summary: quarantineWords(p.componentId, q),
      };
    },
  },
};
