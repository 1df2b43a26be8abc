/**
 * discovery (BOS operators/discovery.py); period discovery_frequency.
 * Selects:
 * - HSM nodes (Type Node) that are not bootorch components yet.
 * Does: creates each as a disabled component with last action `newly_discovered`. It never deletes:
 * a hardware swap or a transient inventory loss must not destroy records.
 */
import type { OperatorDef } from '../engine/operator.ts';
import { insertDiscovered } from '../db/engine/components.ts';
import { transaction } from '../db/tx.ts';
import { canonicalXname } from '../domain/xname.ts';

export const discovery: OperatorDef = {
  name: 'discovery',
  period: (o) => o.discovery_frequency,
  async run(ctx) {
    const nodes = await ctx.adapters.inventory.listNodes();
    const ids = [...new Set(nodes.map((n) => canonicalXname(n.id)))].sort();
    const added = await transaction(ctx.pool, (tx) => insertDiscovered(tx.client, ids, ctx.actor));
    if (added.length) ctx.log.info({ added: added.length }, 'components discovered');
  },
};
