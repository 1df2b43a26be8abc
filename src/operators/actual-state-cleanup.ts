/**
 * actual-state-cleanup (BOS operators/actual_state_cleanup.py). Action `actual_state_cleanup`.
 * Selects:
 * - components (enabled or not) with actual boot artifacts set,
 * - last updated longer ago than component_actual_state_ttl.
 * Does: clears their actual state, so a node that stopped reporting loses what it claimed; an
 * enabled one is then rebooted into its desired state.
 */
import type { OperatorDef } from '../engine/operator.ts';
import { chunks } from '../engine/operator.ts';
import { clearActualState, selectComponents } from '../db/engine/components.ts';
import { ageSeconds } from '../domain/age.ts';
import { transaction } from '../db/tx.ts';

export const actualStateCleanup: OperatorDef = {
  name: 'actual-state-cleanup',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    const ttl = ageSeconds(ctx.options.component_actual_state_ttl);
    const rows = await selectComponents(ctx.pool, { actualOlderThan: new Date(ctx.now().getTime() - ttl * 1000) });
    for (const chunk of chunks(rows, ctx.options.max_component_batch_size)) {
      await transaction(ctx.pool, async (tx) => {
        await clearActualState(tx.client, chunk, ctx.actor);
        if (chunk.some((c) => c.enabled)) await ctx.kicker.kick(tx, ['status']);
      });
    }
  },
};
