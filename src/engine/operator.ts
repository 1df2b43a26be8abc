/**
 * The operator base: loop plumbing, chunking, the retry limit and error capture live here once; each
 * file under src/operators/ only says what it selects and what it does (BOS operators/base.py).
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Adapters } from '../adapters/ports.ts';
import { ServiceError } from '../adapters/errors.ts';
import type { Options } from '../domain/options.ts';
import type { FailureReason } from '../domain/failures.ts';
import type { Kicker, OperatorName } from './kick.ts';
import { transaction } from '../db/tx.ts';
import {
  failComponents, recordAction, recordProblems, selectPages, type ComponentProblem, type ComponentSelection,
  type EngineComponent,
} from '../db/engine/components.ts';
import type { Criterion } from './selection.ts';
import { inInventory } from '../operators/common.ts';
import { countExhausted, observeBatch } from '../observability/engine.ts';

export interface EngineContext {
  pool: pg.Pool;
  adapters: Adapters;
  options: Options;
  now(): Date;
  log: Logger;
  kicker: Kicker;
  /** Kick `op` after `seconds` (escalations and timeouts); repeated calls for the same second collapse. */
  wake(op: OperatorName, seconds: number): Promise<void>;
  actor: string;
}

export interface OperatorDef {
  name: OperatorName;
  /** For explain: the action operators' selection and readiness (absent for the others). */
  action?: Pick<ActionOperatorSpec, 'selection' | 'ready' | 'action' | 'counter'>;
  /** Safety-net period in seconds (the level-triggered loop). */
  period(o: Options): number;
  run(ctx: EngineContext): Promise<void>;
}

/** Split into chunks of max_component_batch_size (0 = one chunk). */
export function chunks<T>(items: T[], size: number): T[][] {
  if (items.length === 0) return [];
  if (!size || size <= 0) return [items];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export type AttemptCounter = 'power_on_attempts' | 'power_off_graceful_attempts' | 'power_off_forceful_attempts';

export interface ActionOperatorSpec {
  name: OperatorName;
  /** last_action written before the side effect. */
  action: string;
  counter: AttemptCounter;
  /** The reason a component gets when it runs out of attempts with no more specific problem recorded. */
  exhaustedReason: FailureReason;
  /** What it selects (SQL, and explain evaluates the same object). */
  selection(ctx: EngineContext): ComponentSelection;
  /** A per-component condition beyond the selection (e.g. a wait that depends on the session's policy). */
  ready?(ctx: EngineContext, c: EngineComponent): Criterion;
  /** Whether HSM must know the component (BOS's HSMState() filter; default true). */
  inventoryCheck?: boolean;
  /** Cut the selection further before acting (e.g. power-on waves). */
  limit?(ctx: EngineContext, rows: EngineComponent[]): Promise<EngineComponent[]>;
  /**
   * Do the side effect for one chunk (already recorded). Returns per-component problems; a thrown
   * error becomes every chunk member's error.
   */
  act(ctx: EngineContext, chunk: EngineComponent[]): Promise<ComponentProblem[] | void>;
  /** After a chunk was acted on (schedule the escalation). */
  after?(ctx: EngineContext, acted: EngineComponent[]): Promise<void>;
}

export function attempts(c: EngineComponent, counter: AttemptCounter): number {
  if (counter === 'power_on_attempts') return c.powerOnAttempts;
  if (counter === 'power_off_graceful_attempts') return c.powerOffGracefulAttempts;
  return c.powerOffForcefulAttempts;
}

/** `retry_policy` of the component, else default_retry_policy. 0 fails before the first attempt (as BOS). */
export function retryLimitHit(c: EngineComponent, counter: AttemptCounter, o: Options): boolean {
  const limit = c.retryPolicy ?? o.default_retry_policy;
  return limit >= 0 && attempts(c, counter) >= limit;
}

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** A thrown error's reason: outside-service failures are service_unavailable, the rest retry_limit-bound. */
export function classify(e: unknown): FailureReason {
  if (e instanceof ServiceError && e.service === 'bss' && !e.transient) return 'boot_parameters_failed';
  return 'service_unavailable';
}

/** BOS `_run_on_chunk` for operators that act and count attempts. */
export function actionOperator(spec: ActionOperatorSpec): OperatorDef {
  return {
    name: spec.name,
    action: spec,
    period: (o) => o.polling_frequency,
    async run(ctx) {
      for await (const page of selectPages(ctx.pool, spec.selection(ctx), ctx.options.max_component_batch_size)) {
        let chunk = page;
        if (spec.ready) chunk = chunk.filter((c) => spec.ready!(ctx, c).met);
        if (spec.limit) chunk = await spec.limit(ctx, chunk);
        if (spec.inventoryCheck !== false) chunk = await inInventory(ctx, chunk);
        if (chunk.length === 0) continue;
        const exhausted = chunk.filter((c) => retryLimitHit(c, spec.counter, ctx.options));
        if (exhausted.length > 0) {
          const failures = exhausted.map((c) => ({
            id: c.id,
            error: c.error || 'The retry limit has been hit for this component, but no services have reported specific errors',
            reason: (c.failureReason || spec.exhaustedReason) as FailureReason,
          }));
          await transaction(ctx.pool, async (tx) => {
            await failComponents(tx.client, exhausted, failures, ctx.actor);
            await ctx.kicker.kick(tx, ['status']);
          });
          countExhausted(spec.action, failures.map((f) => f.reason));
        }
        const eligible = chunk.filter((c) => !retryLimitHit(c, spec.counter, ctx.options));
        const recorded = await transaction(ctx.pool, (tx) => recordAction(tx.client, eligible, spec.action, spec.counter, ctx.actor));
        if (recorded.length === 0) continue;
        try {
          const retries = recorded.filter((c) => attempts(c, spec.counter) > 0).length;
          const problems = await observeBatch(ctx.log, spec.action, recorded.length, retries, async () => (await spec.act(ctx, recorded)) ?? [], classify);
          if (problems.length) await transaction(ctx.pool, (tx) => recordProblems(tx.client, recorded, problems, ctx.actor));
        } catch (e) {
          ctx.log.warn({ err: errorText(e), operator: spec.name, count: recorded.length }, 'action failed for a chunk');
          await transaction(ctx.pool, (tx) => recordProblems(tx.client, recorded,
            recorded.map((c) => ({ id: c.id, error: errorText(e), reason: classify(e) })), ctx.actor));
        }
        if (spec.after) await spec.after(ctx, recorded);
      }
    },
  };
}
