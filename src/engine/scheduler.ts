/**
 * The one way work is started. Every operator tick runs because something asked the scheduler, in
 * one of three words, each with one meaning:
 * - kick(db, ops): run these operators soon, because a write gave them work. Enqueued on the caller's
 *   handle: inside its transaction (the tick exists exactly when the write commits) or, on the pool,
 *   at once. Every worker process hears it (NOTIFY) and fetches without waiting for pg-boss's 0.5 s fetch interval.
 * - wakeAt(db, op, at): run `op` when a wait is over (escalations, timeouts), at a database time.
 * - poll(op, seconds): the level-triggered safety net; every tick ends by asking for its next poll.
 * - enqueueActions(db, op, jobs): per-component action jobs on the operator's action queue (engine/action-jobs.ts),
 *   enqueued in the transaction that records the decision; any worker process drains them in batches.
 * - decideLater(db, op, rows, seconds): per-component delayed decisions (the graceful to forceful
 *   escalation): when due, the operator decides again for just those components.
 * The tick queues are `stately` (one waiting, one running), so a burst of kicks collapses into one
 * pending tick and a kick during a running tick makes exactly one more.
 */
import type { Db } from '../db/client.ts';

export const OPERATORS = [
  'session-setup',
  'status',
  'power-on',
  'power-off-graceful',
  'power-off-forceful',
  'deploy-to-disk',
  'configuration',
  'session-completion',
  'session-cleanup',
  'discovery',
  'actual-state-cleanup',
  'power-drift',
] as const;
export type OperatorName = (typeof OPERATORS)[number];

/**
 * The operators with a job queue (engine/action-jobs.ts), created with pg-boss's queues: the acting
 * ones, whose ticks decide and whose per-component jobs act, and `status`, which takes only delayed
 * decisions (the power-on and boot waits). Only these can enqueue jobs (the types say so): pg-boss's
 * insert drops, without an error, any job whose queue does not exist.
 */
export const ACTION_OPERATORS = [
  'power-on',
  'power-off-graceful',
  'power-off-forceful',
  'deploy-to-disk',
  'configuration',
] as const satisfies readonly OperatorName[];
export type ActionOperatorName = (typeof ACTION_OPERATORS)[number];
export const JOB_OPERATORS = [...ACTION_OPERATORS, 'status'] as const satisfies readonly OperatorName[];
export type JobOperatorName = (typeof JOB_OPERATORS)[number];

/**
 * One component's action, as decided by an operator's tick: what the action worker needs to act and
 * to check that the decision still stands (engine/action-jobs.ts).
 */
export interface ActionJob {
  id: string;
  session: string;
  tenant: string;
  /** The action recorded (last_action), e.g. powering_on. */
  action: string;
  /** The attempt count recorded with it (null for actions that count none, e.g. configuration). */
  attempt: number | null;
  /** The row version the decision left (xmin after recording), for explain and diagnostics. */
  version: string;
  /** The desired configuration decided on (configuration jobs). */
  config?: string;
  /** pg-boss retries of this job (transient failures): from the retry policy. */
  retryLimit: number;
  /** Seconds to its first retry, and whether later retries back off (options job_retry_*, or the session's rollout policy). */
  retryDelay: number;
  retryBackoff: boolean;
  /** The longest wait before a retry, seconds: failJobs caps pg-boss's backoff with it (read from the job's data). */
  retryMaxDelay: number;
  /** The owning session's trace (W3C traceparent): the worker that acts joins it, its lines carry its id. */
  trace?: string;
}

/** A component, as a delayed decision names it. */
export interface DueComponent {
  id: string;
  session: string;
  tenant: string;
}

/**
 * A delayed decision (startAfter): the components of one session acted on together (one outside call),
 * for which the operator decides again, each on its own, when their common wait is over. One job row
 * per acted batch, not per component: a 10,000-node reboot's escalations are 4 rows, not 10,000.
 */
export interface DueJob {
  due: true;
  ids: string[];
  session: string;
  tenant: string;
}

export interface Scheduler {
  /** Run these operators soon: enqueued on `db` (in its transaction, if it is one). */
  kick(db: Db, operators: readonly OperatorName[]): Promise<void>;
  /** Run `op` at `at` (database time, rounded up to 0.1 s); repeated calls for the same moment collapse into one. */
  wakeAt(db: Db, op: OperatorName, at: Date): Promise<void>;
  /** Make sure `op` runs within `seconds` (one pending poll per operator). */
  poll(op: OperatorName, seconds: number): Promise<void>;
  /** Enqueue per-component action jobs on `op`'s action queue, in one statement, on `db`. */
  enqueueActions(db: Db, op: ActionOperatorName, jobs: readonly ActionJob[]): Promise<void>;
  /** Ask `op` to decide again for these components in `seconds` (one statement per distinct delay). */
  decideLater(db: Db, op: JobOperatorName, rows: readonly DueComponent[], seconds: number): Promise<void>;
}

/** A scheduler that starts nothing, for code paths that run without an engine (tools, some tests). */
export const noScheduler: Scheduler = {
  async kick() {},
  async wakeAt() {},
  async poll() {},
  async enqueueActions() {},
  async decideLater() {},
};
