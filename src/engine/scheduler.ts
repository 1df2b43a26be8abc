/**
 * The one way work is started. Every operator tick runs because something asked the scheduler, in
 * one of three words, each with one meaning:
 * - kick(db, ops): run these operators soon, because a write gave them work. Enqueued on the caller's
 *   handle: inside its transaction (the tick exists exactly when the write commits) or, on the pool,
 *   at once. Every worker process hears it (NOTIFY) and fetches without waiting for pg-boss's 0.5 s fetch interval.
 * - wakeAt(db, op, at): run `op` when a wait is over (escalations, timeouts), at a database time.
 * - poll(op, seconds): the level-triggered safety net; every tick ends by asking for its next poll.
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
] as const;
export type OperatorName = (typeof OPERATORS)[number];

export interface Scheduler {
  /** Run these operators soon: enqueued on `db` (in its transaction, if it is one). */
  kick(db: Db, operators: readonly OperatorName[]): Promise<void>;
  /** Run `op` at `at` (database time); repeated calls for the same second collapse into one. */
  wakeAt(db: Db, op: OperatorName, at: Date): Promise<void>;
  /** Make sure `op` runs within `seconds` (one pending poll per operator). */
  poll(op: OperatorName, seconds: number): Promise<void>;
}

/** A scheduler that starts nothing, for code paths that run without an engine (tools, some tests). */
export const noScheduler: Scheduler = { async kick() {}, async wakeAt() {}, async poll() {} };
