/**
 * configuration (BOS operators/configuration.py). Not an action operator: last_action and the
 * attempt counters are untouched.
 * Selects:
 * - enabled components whose status is configuring,
 * - whose CFS desired_config differs from the desired configuration.
 * Does: CFS PATCH {enabled: true, desired_config, tags: {bos_session}} per (configuration, session),
 * without clearing state, then kicks status.
 */
import { defineOperator } from '../engine/operator.ts';
import { groupBy } from '../domain/lists.ts';
import { done } from '../engine/outcome.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { selectPages, type EngineComponent } from '../db/components/select.ts';

export const configuration = defineOperator<EngineComponent>({
  name: 'configuration',
  select: (ctx) => selectPages(ctx.db, { enabled: true, statuses: ['configuring'] }, ctx.options.max_component_batch_size),
  record: recordComponentOutcomes,
  async act(ctx, page) {
    const cfs = new Map((await ctx.adapters.config.getComponents(page.map((c) => c.id))).map((c) => [c.id, c]));
    const todo = page.filter((c) => cfs.get(c.id)?.desiredConfig !== c.desiredConfiguration);
    for (const group of groupBy(todo, (c) => JSON.stringify([c.desiredConfiguration, c.session]))) {
      await ctx.adapters.config.patchComponents(
        group.map((c) => c.id),
        {
          enabled: true,
          desiredConfig: group[0]!.desiredConfiguration,
          tags: { bos_session: group[0]!.session },
        },
      );
    }
    return { outcomes: page.map((c) => [c, done]), kick: todo.length ? ['status'] : [] };
  },
});
