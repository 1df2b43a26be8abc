/**
 * actual-state-cleanup (BOS operators/actual_state_cleanup.py). Action `actual_state_cleanup`.
 * Selects:
 * - components (enabled or not) with actual boot artifacts set,
 * - last updated longer ago than component_actual_state_ttl.
 * Does: clears their actual state, so a node that stopped reporting loses what it claimed; an
 * enabled one is then rebooted into its desired state (status is kicked).
 */
import { defineOperator } from '../engine/operator.ts';
import { done } from '../engine/outcome.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { selectPages, type EngineComponent } from '../db/components/select.ts';
import { clearActualState } from '../db/components/actions.ts';
import { ageSeconds } from '../domain/age.ts';

export const actualStateCleanup = defineOperator<EngineComponent>({
  name: 'actual-state-cleanup',
  select(ctx) {
    const ttl = ageSeconds(ctx.options.component_actual_state_ttl);
    return selectPages(ctx.db, { actualOlderThan: new Date(ctx.now().getTime() - ttl * 1000) }, ctx.options.max_component_batch_size);
  },
  record: recordComponentOutcomes,
  async decidePage(ctx, page) {
    return {
      outcomes: page.map((c) => [c, done]),
      async write(tx) {
        await clearActualState(tx, page, ctx.actor);
        return page.some((c) => c.enabled) ? ['status'] : [];
      },
    };
  },
});
