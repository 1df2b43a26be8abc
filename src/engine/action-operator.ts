/**
 * The base of the operators that act on components and count attempts (power-on, graceful and
 * forceful power-off; BOS `_run_on_chunk`), on top of the operator base. The tick decides: per page,
 * keep the components that are ready and known to the inventory, fail the ones out of attempts, and
 * record the action (before any side effect) together with one action job per component, in one
 * transaction. The action worker acts (engine/action-jobs.ts): it calls the same spec's `perform` on a
 * batch of jobs and turns what happened into outcomes, each job completed or failed on its own.
 */
import type { FailureReason } from '../domain/failures.ts';
import type { Options } from '../domain/options.ts';
import { attempts, selectComponents, selectPages, type AttemptCounter, type EngineComponent } from '../db/components/select.ts';
import { claimAction, recordAction } from '../db/components/actions.ts';
import { recordComponentOutcomes } from './component-outcomes.ts';
import { defineOperator, type ActionView, type EngineContext, type OperatorDef, type Step } from './operator.ts';
import { again, errorText, failed, type Outcome } from './outcome.ts';
import type { ActionOperatorName, OperatorName } from './scheduler.ts';
import { countExhausted } from '../observability/engine.ts';
import { actionJobs, type JobRetry, type JobSpec, type Next } from './action-jobs.ts';
import { storedRolloutField } from '../domain/rollout-policy.ts';

export type { AttemptCounter };

export interface ActionOperatorSpec extends ActionView {
  /** An operator with an action queue (scheduler.ts ACTION_OPERATORS). */
  name: ActionOperatorName;
  /** The reason a component gets when it runs out of attempts with no more specific problem recorded. */
  exhaustedReason: FailureReason;
  /** Whether HSM must know the component (BOS's HSMState() filter; default true). */
  inventoryCheck?: boolean;
  /** Cut the page further before acting (e.g. power-on waves); may ask to be woken when more is due. */
  limit?(ctx: EngineContext, rows: EngineComponent[]): Promise<{ rows: EngineComponent[]; wake?: Array<[OperatorName, number]> }>;
  /** Do the side effect for components whose action is recorded; the outcome of each that is not simply done. */
  perform(ctx: EngineContext, chunk: EngineComponent[]): Promise<Map<string, Outcome>>;
  /** What to run next for the components acted on (the escalation, the status check). */
  next(ctx: EngineContext, acted: EngineComponent[]): Next;
  /** Of these components (retried jobs), the ids of nodes already where the action takes them: not acted on again. */
  alreadyDone?(ctx: EngineContext, rows: EngineComponent[]): Promise<Set<string>>;
}

/** The retry policy: `retry_policy` of the component, else default_retry_policy (negative: no limit). */
export const retryPolicy = (c: EngineComponent, o: Options) => c.retryPolicy ?? o.default_retry_policy;

/** Retries pg-boss gives one action job for transient failures: the retry policy, at most this many. */
const MAX_JOB_RETRIES = 10;

/**
 * How pg-boss retries a component's action job (transient failures): as many times as the retry
 * policy, at most MAX_JOB_RETRIES; delay, backoff and cap from the owning session's rollout policy,
 * else the options job_retry_*. The cap is never below the delay (it would cut even the first retry).
 */
export function jobRetry(c: EngineComponent, o: Options): JobRetry {
  const p = retryPolicy(c, o);
  const retryDelay = storedRolloutField(c.policy, 'jobRetryDelay') ?? o.job_retry_delay;
  return {
    retryLimit: p < 0 ? MAX_JOB_RETRIES : Math.min(p, MAX_JOB_RETRIES),
    retryDelay,
    retryBackoff: storedRolloutField(c.policy, 'jobRetryBackoff') ?? o.job_retry_backoff,
    retryMaxDelay: Math.max(retryDelay, storedRolloutField(c.policy, 'jobRetryMaxDelay') ?? o.job_retry_max_delay),
  };
}

/** `retry_policy` of the component, else default_retry_policy. 0 fails before the first attempt (as BOS). */
export function retryLimitHit(c: EngineComponent, counter: AttemptCounter, o: Options): boolean {
  const limit = retryPolicy(c, o);
  return limit >= 0 && attempts(c, counter) >= limit;
}

export function actionOperator(spec: ActionOperatorSpec): OperatorDef {
  const view: ActionView = { action: spec.action, counter: spec.counter, selection: spec.selection, ready: spec.ready };
  /** The decision for some components: outcomes for those that cannot go on, the action recorded and enqueued for the rest. */
  const decidePage = async (ctx: EngineContext, page: EngineComponent[]): Promise<Step<EngineComponent>> => {
    const outcomes: Array<[EngineComponent, Outcome]> = [];
    let chunk = spec.ready ? page.filter((c) => spec.ready!(ctx, c).met) : page;
    const limited = spec.limit ? await spec.limit(ctx, chunk) : { rows: chunk };
    chunk = limited.rows;
    if (spec.inventoryCheck !== false) chunk = await inInventory(ctx, chunk, outcomes);
    const exhausted: FailureReason[] = [];
    for (const c of chunk) {
      if (!retryLimitHit(c, spec.counter, ctx.options)) continue;
      const reason = (c.failureReason || spec.exhaustedReason) as FailureReason;
      exhausted.push(reason);
      outcomes.push([
        c,
        failed({
          error: c.error || 'The retry limit has been hit for this component, but no services have reported specific errors',
          reason,
        }),
      ]);
    }
    countExhausted(spec.action, exhausted);
    const eligible = chunk.filter((c) => !retryLimitHit(c, spec.counter, ctx.options));
    return {
      outcomes,
      wake: limited.wake,
      // The action is recorded before the side effect, with its job, in one transaction: a crash can
      // never hide a power call, and a recorded action always has its job (or the tick re-decides).
      write: !eligible.length
        ? undefined
        : async (tx) => {
            const recorded = await recordAction(tx, eligible, spec.action, spec.counter, ctx.actor);
            if (recorded.length)
              await ctx.scheduler.enqueueActions(
                tx,
                spec.name,
                actionJobs(
                  recorded,
                  spec.action,
                  (c) => attempts(c, spec.counter) + 1,
                  (c) => jobRetry(c, ctx.options),
                ),
              );
          },
    };
  };
  const jobs: JobSpec = {
    operator: spec.name,
    action: spec.action,
    // A node held since (on_hold: status read its power unknown, row U1) is not acted on: its BMC
    // failed; the operator decides again once the hold ends.
    holds: (row, job) =>
      row.session === job.session &&
      row.sessionTenant === job.tenant &&
      row.lastAction === job.action &&
      !row.lastActionFailed &&
      row.statusOverride !== 'on_hold' &&
      attempts(row, spec.counter) === job.attempt,
    claim: (ctx, rows) => claimAction(ctx.db, rows),
    alreadyDone: spec.alreadyDone,
    perform: spec.perform,
    next: spec.next,
    redecide: async (ctx, ids) => decidePage(ctx, await selectComponents(ctx.db, { ...spec.selection(ctx), ids })),
  };
  return defineOperator<EngineComponent>(
    {
      name: spec.name,
      select: (ctx) => selectPages(ctx.db, spec.selection(ctx), ctx.options.max_component_batch_size),
      record: recordComponentOutcomes,
      decidePage,
    },
    { action: view, jobs },
  );
}

/**
 * Keep the components HSM knows (BOS's HSMState() filter). Unlike BOS, which silently skips the rest
 * forever, a component HSM does not know is failed with reason not_in_inventory, so it is visible.
 * If HSM cannot be reached, every component gets the error and nothing is acted on this tick.
 */
async function inInventory(
  ctx: EngineContext,
  rows: EngineComponent[],
  outcomes: Array<[EngineComponent, Outcome]>,
): Promise<EngineComponent[]> {
  if (rows.length === 0) return rows;
  let known: Set<string>;
  try {
    known = new Set((await ctx.adapters.inventory.queryNodes(rows.map((r) => r.id))).map((n) => n.id));
  } catch (e) {
    for (const r of rows) outcomes.push([r, again({ error: errorText(e), reason: 'service_unavailable' })]);
    return [];
  }
  for (const r of rows) {
    if (!known.has(r.id))
      outcomes.push([r, failed({ error: 'Component is not in the hardware inventory (HSM)', reason: 'not_in_inventory' })]);
  }
  return rows.filter((r) => known.has(r.id));
}
