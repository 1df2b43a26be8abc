/**
 * The base of the operators that act on components and count attempts (power-on, graceful and
 * forceful power-off; BOS `_run_on_chunk`), on top of the operator base: per page, keep the
 * components that are ready and known to the inventory, fail the ones out of attempts, record the
 * action before the side effect, act, and turn what happened into outcomes.
 */
import { transaction } from '../db/tx.ts';
import type { FailureReason } from '../domain/failures.ts';
import type { Options } from '../domain/options.ts';
import { attempts, selectPages, type AttemptCounter, type EngineComponent } from '../db/components/select.ts';
import { recordAction } from '../db/components/actions.ts';
import { recordComponentOutcomes } from './component-outcomes.ts';
import { defineOperator, type ActionView, type EngineContext, type OperatorDef, type Step } from './operator.ts';
import { again, errorText, failed, fromError, reasonOf, type Outcome } from './outcome.ts';
import type { OperatorName } from './scheduler.ts';
import { countExhausted, observeBatch } from '../observability/engine.ts';

export type { AttemptCounter };

export interface ActionOperatorSpec extends ActionView {
  name: OperatorName;
  /** The reason a component gets when it runs out of attempts with no more specific problem recorded. */
  exhaustedReason: FailureReason;
  /** Whether HSM must know the component (BOS's HSMState() filter; default true). */
  inventoryCheck?: boolean;
  /** Cut the page further before acting (e.g. power-on waves); may ask to be woken when more is due. */
  limit?(ctx: EngineContext, rows: EngineComponent[]): Promise<{ rows: EngineComponent[]; wake?: Array<[OperatorName, number]> }>;
  /** Do the side effect for components whose action is recorded; the outcome of each that is not simply done. */
  act(ctx: EngineContext, chunk: EngineComponent[]): Promise<Map<string, Outcome>>;
  /** What to run next for the components acted on (the escalation, the status check). */
  next(ctx: EngineContext, acted: EngineComponent[]): Pick<Step<EngineComponent>, 'kick' | 'wake'>;
}

/** `retry_policy` of the component, else default_retry_policy. 0 fails before the first attempt (as BOS). */
export function retryLimitHit(c: EngineComponent, counter: AttemptCounter, o: Options): boolean {
  const limit = c.retryPolicy ?? o.default_retry_policy;
  return limit >= 0 && attempts(c, counter) >= limit;
}

export function actionOperator(spec: ActionOperatorSpec): OperatorDef {
  const view: ActionView = { action: spec.action, counter: spec.counter, selection: spec.selection, ready: spec.ready };
  return defineOperator<EngineComponent>(
    {
      name: spec.name,
      select: (ctx) => selectPages(ctx.db, spec.selection(ctx), ctx.options.max_component_batch_size),
      record: recordComponentOutcomes,
      async act(ctx, page) {
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
        // The action is recorded (and committed) before the side effect: a crash can never hide a power call.
        const recorded = await transaction(ctx.db, (tx) => recordAction(tx, eligible, spec.action, spec.counter, ctx.actor));
        if (recorded.length === 0) return { outcomes, wake: limited.wake };
        let acted = new Map<string, Outcome>();
        try {
          // Counted, timed and traced as one batch (observability/engine.ts): the problems are the outcomes not done.
          const retries = recorded.filter((c) => attempts(c, spec.counter) > 0).length;
          await observeBatch(
            ctx.log,
            spec.action,
            recorded.length,
            retries,
            async () => {
              acted = await spec.act(ctx, recorded);
              return [...acted].flatMap(([id, o]) => (o.kind !== 'done' && o.problem ? [{ id, reason: o.problem.reason }] : []));
            },
            (e) => reasonOf(e),
          );
        } catch (e) {
          ctx.log.warn({ err: errorText(e), operator: spec.name, count: recorded.length }, 'action failed for a chunk');
          const o = fromError(e);
          acted = new Map(recorded.map((c) => [c.id, o]));
        }
        for (const c of recorded) outcomes.push([c, acted.get(c.id) ?? { kind: 'done' }]);
        const next = spec.next(ctx, recorded);
        return { outcomes, kick: next.kick, wake: [...(limited.wake ?? []), ...(next.wake ?? [])] };
      },
    },
    { action: view },
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
