/**
 * The edge-triggered fast path: a write that gives an operator work enqueues that operator's tick in
 * the same transaction. The tick queues are `stately` (one waiting, one running), so a burst of kicks
 * collapses into one pending tick and a kick during a running tick makes exactly one more.
 */
import type { Tx } from '../db/tx.ts';

export const OPERATORS = [
  'session-setup',
  'status',
  'power-on',
  'power-off-graceful',
  'power-off-forceful',
  'configuration',
  'session-completion',
  'session-cleanup',
  'discovery',
  'actual-state-cleanup',
] as const;
export type OperatorName = (typeof OPERATORS)[number];

export interface Kicker {
  /** Enqueue these operators' ticks inside `tx` (visible to workers at COMMIT). */
  kick(tx: Tx, operators: readonly OperatorName[]): Promise<void>;
  /** Enqueue outside a transaction. */
  kickNow(operators: readonly OperatorName[]): Promise<void>;
}

/** A kicker that does nothing, for code paths that run without an engine (and the polling baseline). */
export const noKicks: Kicker = { async kick() {}, async kickNow() {} };
