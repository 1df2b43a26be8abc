/**
 * The operator base, for all ten operators: the loop over pages, error capture, and writing what
 * happened as data live here once; each file under src/operators/ only says what it selects and what
 * it does (BOS operators/base.py). A step returns a closed outcome per item (engine/outcome.ts) and
 * the follow-ups it causes; the base records both in one transaction, so the work a step creates
 * commits with the step's result.
 */
import type { Logger } from 'pino';
import type { Adapters } from '../adapters/ports.ts';
import type { Db } from '../db/client.ts';
import { transaction } from '../db/tx.ts';
import type { Options } from '../domain/options.ts';
import type { AttemptCounter, ComponentSelection, EngineComponent } from '../db/components/select.ts';
import type { Criterion } from './selection.ts';
import type { Clock } from './clock.ts';
import type { OperatorName, Scheduler } from './scheduler.ts';
import { fromError, errorText, type Outcome } from './outcome.ts';
import { chunks } from '../domain/lists.ts';
import type { JobSpec } from './action-jobs.ts';
import { traceLogger } from '../observability/logging.ts';

export interface EngineContext {
  db: Db;
  adapters: Adapters;
  options: Options;
  /** The database's clock (engine/clock.ts): every age and wait is measured with it. */
  now: Clock;
  log: Logger;
  scheduler: Scheduler;
  actor: string;
}

/** What one step did: an outcome per item, its own writes, and the operators it gave work to. */
export interface Step<T> {
  outcomes: Array<[T, Outcome]>;
  /**
   * The step's own writes (a decision, a setup), run in the transaction that records the outcomes;
   * returns the operators whose work they created.
   */
  write?(tx: Db): Promise<OperatorName[] | void>;
  /** Operators to run next (their work appeared), kicked with the outcomes. */
  kick?: OperatorName[];
  /** Operators to run again after a wait, in seconds (escalations, timeouts, transit polling). */
  wake?: Array<[OperatorName, number]>;
}

export interface OperatorSpec<T> {
  name: OperatorName;
  /** Safety-net period in seconds (the level-triggered loop); 0 = none. Default polling_frequency. */
  period?(o: Options): number;
  /** What it selects, a page at a time (one page is in memory however large the machine). */
  select(ctx: EngineContext): AsyncIterable<T[]>;
  /** What it does for one page. A thrown error is every item's outcome (transient: continue; else failed). */
  decidePage(ctx: EngineContext, page: T[]): Promise<Step<T>>;
  /** Write the outcomes as data on the items (errors, failures), in the step's transaction. */
  record(tx: Db, ctx: EngineContext, outcomes: Array<[T, Outcome]>): Promise<void>;
  /**
   * The trace a page is about (a session operator's page is one session: its stored trace context):
   * the page's lines, its step's and its record's, carry its trace id. Absent: the tick's log as is.
   */
  trace?(page: T[]): string | null | undefined;
}

/** What explain evaluates for one node of an action operator: its selection and readiness. */
export interface ActionView {
  action: string;
  counter: AttemptCounter;
  selection(ctx: Pick<EngineContext, 'options'>): ComponentSelection;
  ready?(ctx: Pick<EngineContext, 'options' | 'now'>, c: EngineComponent): Criterion;
}

/** What the runtime runs, and what explain reads (the action operators' selection and readiness). */
export interface OperatorDef {
  name: OperatorName;
  /** For explain: the action operators' selection and readiness (absent for the others). */
  action?: ActionView;
  /** How its per-component action jobs are acted on (engine/action-jobs.ts); absent when it acts in its tick. */
  jobs?: JobSpec;
  period(o: Options): number;
  run(ctx: EngineContext): Promise<void>;
}

export function defineOperator<T>(spec: OperatorSpec<T>, extra: Pick<OperatorDef, 'action' | 'jobs'> = {}): OperatorDef {
  return {
    name: spec.name,
    period: spec.period ?? ((o) => o.polling_frequency),
    ...extra,
    async run(ctx) {
      for await (const page of spec.select(ctx)) {
        if (page.length === 0) continue;
        // The one place a page's lines are bound to the trace it is about.
        const pageCtx = spec.trace ? { ...ctx, log: traceLogger(ctx.log, spec.trace(page)) } : ctx;
        let step: Step<T>;
        try {
          step = await spec.decidePage(pageCtx, page);
        } catch (e) {
          pageCtx.log.warn({ err: errorText(e), operator: spec.name, count: page.length }, 'step failed for a page');
          const outcome = fromError(e);
          step = { outcomes: page.map((item) => [item, outcome]) };
        }
        await commitStep(pageCtx, spec.record, step);
      }
    },
  };
}

/**
 * Record a step's outcomes and schedule its follow-ups, in one transaction (none when there is nothing
 * to write); `also` joins it (the action jobs' completion).
 */
export async function commitStep<T>(
  ctx: EngineContext,
  record: OperatorSpec<T>['record'],
  step: Step<T>,
  also?: (tx: Db) => Promise<void>,
): Promise<void> {
  const written = step.outcomes.filter(([, o]) => o.kind === 'failed' || (o.kind === 'continue' && o.problem));
  const wake = step.wake ?? [];
  if (!step.write && !also && written.length === 0 && !step.kick?.length && wake.length === 0) return;
  await transaction(ctx.db, async (tx) => {
    const kick = new Set([...(step.kick ?? []), ...((await step.write?.(tx)) ?? [])]);
    if (written.length) await record(tx, ctx, written);
    await also?.(tx);
    if (kick.size) await ctx.scheduler.kick(tx, [...kick]);
    for (const [op, seconds] of wake) await ctx.scheduler.wakeAt(tx, op, new Date(ctx.now().getTime() + seconds * 1000));
  });
}

/** A select that yields the items one at a time (sessions: each is its own step and transaction). */
export async function* oneByOne<T>(items: Promise<T[]>): AsyncGenerator<T[]> {
  for (const item of await items) yield [item];
}

/** A select that yields `items` in chunks of max_component_batch_size. */
export async function* inChunks<T>(items: Promise<T[]> | T[], size: number): AsyncGenerator<T[]> {
  yield* chunks(await items, size);
}

export { errorText };
