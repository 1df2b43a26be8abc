/**
 * configuration (BOS operators/configuration.py). Not an action operator: last_action and the
 * attempt counters are untouched.
 * Selects:
 * - enabled components whose status is configuring,
 * - whose CFS desired_config differs from the desired configuration.
 * Does: CFS PATCH {enabled: true, desired_config, tags: {bos_session}} per (configuration, session),
 * without clearing state.
 */
import type { OperatorDef } from '../engine/operator.ts';
import { chunks, errorText } from '../engine/operator.ts';
import { recordProblems, selectComponents } from '../db/engine/components.ts';
import { transaction } from '../db/tx.ts';
import { groupBy } from './power-on.ts';

export const configuration: OperatorDef = {
  name: 'configuration',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    const rows = await selectComponents(ctx.pool, { enabled: true, statuses: ['configuring'] });
    for (const chunk of chunks(rows, ctx.options.max_component_batch_size)) {
      try {
        const cfs = new Map((await ctx.adapters.config.getComponents(chunk.map((c) => c.id))).map((c) => [c.id, c]));
        const todo = chunk.filter((c) => cfs.get(c.id)?.desiredConfig !== c.desiredConfiguration);
        for (const group of groupBy(todo, (c) => JSON.stringify([c.desiredConfiguration, c.session]))) {
          await ctx.adapters.config.patchComponents(group.map((c) => c.id), {
            enabled: true, desiredConfig: group[0]!.desiredConfiguration, tags: { bos_session: group[0]!.session },
          });
        }
        if (todo.length) await ctx.kicker.kickNow(['status']);
      } catch (e) {
        await transaction(ctx.pool, (tx) => recordProblems(tx.client, chunk,
          chunk.map((c) => ({ id: c.id, error: errorText(e), reason: 'service_unavailable' })), ctx.actor));
      }
    }
  },
};
