/**
 * discovery (BOS operators/discovery.py); period discovery_frequency.
 * Selects:
 * - HSM nodes (Type Node) that are not bootorch components yet.
 * Does: creates each as a disabled component with last action `newly_discovered`. It never deletes:
 * a hardware swap or a transient inventory loss must not destroy records.
 */
import { defineOperator, inChunks } from '../engine/operator.ts';
import { done } from '../engine/outcome.ts';
import { insertDiscovered } from '../db/components/actions.ts';
import { canonicalXname } from '../domain/xname.ts';

export const discovery = defineOperator<string>({
  name: 'discovery',
  period: (o) => o.discovery_frequency,
  select: (ctx) =>
    inChunks(
      ctx.adapters.inventory.listNodes().then((nodes) => [...new Set(nodes.map((n) => canonicalXname(n.id)))].sort()),
      ctx.options.max_component_batch_size,
    ),
  // Nothing is written about a node HSM lists; a failed step is logged by the base and retried next tick.
  record: async () => {},
  async decidePage(ctx, ids) {
    return {
      outcomes: ids.map((id) => [id, done]),
      async write(tx) {
        const added = await insertDiscovered(tx, ids, ctx.actor);
        if (added.length) ctx.log.info({ added: added.length }, 'components discovered');
      },
    };
  },
});
