/**
 * How outcomes become data on components: a problem the component continues with is its error (and
 * reason); a failure marks it failed, and status, kicked in the same transaction, disables it.
 */
import type { Db } from '../db/client.ts';
import { failComponents, recordProblems } from '../db/components/actions.ts';
import type { EngineComponent } from '../db/components/select.ts';
import type { EngineContext } from './operator.ts';
import type { Outcome } from './outcome.ts';

export async function recordComponentOutcomes(tx: Db, ctx: EngineContext, outcomes: Array<[EngineComponent, Outcome]>): Promise<void> {
  const rows = outcomes.map(([c]) => c);
  const problems = (kind: Outcome['kind']) =>
    outcomes.flatMap(([c, o]) => (o.kind === kind && o.kind !== 'done' && o.problem ? [{ id: c.id, ...o.problem }] : []));
  await recordProblems(tx, rows, problems('continue'), ctx.actor);
  const failures = problems('failed');
  await failComponents(tx, rows, failures, ctx.actor);
  if (failures.length) await ctx.scheduler.kick(tx, ['status']);
}
