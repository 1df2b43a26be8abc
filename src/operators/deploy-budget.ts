/**
 * The deploy budget at power-on (domain/deploy-budget.ts): of the nodes power-on is about to power, those
 * with a pending disk deploy go only while the budget has a slot for them (db/deploys.ts admitDeploys,
 * one count over every session and engine process). The others stay power_on_pending, powered off, and
 * power-on is woken again soon: a slot frees when a deploy's image is written or the deploy fails.
 */
import type { EngineContext } from '../engine/operator.ts';
import type { OperatorName } from '../engine/scheduler.ts';
import type { EngineComponent } from '../db/components/select.ts';
import { admitDeploys } from '../db/deploys.ts';
import { deployBudgetWords, deploySlots } from '../domain/deploy-budget.ts';

/** Seconds until power-on looks again for free slots while nodes wait for one. */
const RECHECK_SECONDS = 2;

export async function deployBudget(
  ctx: EngineContext,
  rows: EngineComponent[],
): Promise<{ rows: EngineComponent[]; wake: Array<[OperatorName, number]> }> {
  const o = ctx.options;
  const { waiting, holding } = await admitDeploys(
    ctx.db,
    rows.map((r) => r.id),
    deploySlots(o),
    { bootSeconds: o.max_boot_wait_time, silentSeconds: o.deploy_heartbeat_timeout },
  );
  if (!waiting.length) return { rows, wake: [] };
  ctx.log.debug({ waiting: waiting.length, holding, budget: deployBudgetWords(o) }, 'disk deploys wait for the deploy budget');
  const held = new Set(waiting);
  return { rows: rows.filter((r) => !held.has(r.id)), wake: [['power-on', RECHECK_SECONDS]] };
}
