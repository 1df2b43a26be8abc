/**
 * Pieces several operators share: BOS's HSMState() existence filter, and chunked transactions.
 */
import type { EngineContext } from '../engine/operator.ts';
import { errorText } from '../engine/operator.ts';
import { failComponents, recordProblems, type EngineComponent } from '../db/engine/components.ts';
import { transaction } from '../db/tx.ts';

/**
 * Keep the components HSM knows (BOS's HSMState() filter). Unlike BOS, which silently skips the rest
 * forever, a component HSM does not know is failed with reason not_in_inventory, so it is visible.
 * If HSM cannot be reached, every component gets the error and nothing is acted on this tick.
 */
export async function inInventory(ctx: EngineContext, rows: EngineComponent[]): Promise<EngineComponent[]> {
  if (rows.length === 0) return rows;
  let known: Set<string>;
  try {
    known = new Set((await ctx.adapters.inventory.queryNodes(rows.map((r) => r.id))).map((n) => n.id));
  } catch (e) {
    await transaction(ctx.pool, (tx) => recordProblems(tx.client, rows, rows.map((r) => ({
      id: r.id, error: errorText(e), reason: 'service_unavailable',
    })), ctx.actor));
    return [];
  }
  const missing = rows.filter((r) => !known.has(r.id));
  if (missing.length > 0) {
    await transaction(ctx.pool, async (tx) => {
      await failComponents(tx.client, missing, missing.map((r) => ({
        id: r.id, error: 'Component is not in the hardware inventory (HSM)', reason: 'not_in_inventory',
      })), ctx.actor);
      await ctx.kicker.kick(tx, ['status']);
    });
  }
  return rows.filter((r) => known.has(r.id));
}
