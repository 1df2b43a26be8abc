/**
 * What one step of an operator did for one item (a component or a session), as a closed set
 * (metal3's step results):
 * - done: this operator has nothing more to do for it (it acted, or nothing was needed);
 * - continue: it needs this operator again on a later tick (a wait is not over, or a transient
 *   problem, recorded as the item's error, will be retried);
 * - failed: give up on it, with a reason from the closed set (domain/failures.ts).
 * A thrown error becomes an outcome in one place (`fromError`): transient errors continue (retry),
 * permanent ones fail.
 */
import { ServiceError } from '../adapters/errors.ts';
import { databaseErrorText, isDatabaseUnavailable } from '../db/outage.ts';
import type { FailureReason } from '../domain/failures.ts';

export interface Problem {
  error: string;
  reason: FailureReason;
}

/** `retry` on continue: a transient failure of the side effect, which the action job retries (engine/action-jobs.ts). */
export type Outcome = { kind: 'done' } | { kind: 'continue'; problem?: Problem; retry?: boolean } | { kind: 'failed'; problem: Problem };

export const done: Outcome = { kind: 'done' };
export const again = (problem?: Problem): Outcome => ({ kind: 'continue', problem });
export const failed = (problem: Problem): Outcome => ({ kind: 'failed', problem });

/** An error as the words a node, a session or a log line carries: a database error without its SQL (db/outage.ts). */
export function errorText(e: unknown): string {
  const db = databaseErrorText(e);
  if (db !== null) return db;
  if (e instanceof Error) return e.message;
  return String(e);
}

/**
 * Whether trying again later may succeed: an outside service's 5xx, timeout or refused connection
 * (ServiceError.transient), or a lost database. Anything else (a 4xx, a malformed answer, a bug) will
 * fail the same way next time.
 */
export function isTransient(e: unknown): boolean {
  return e instanceof ServiceError ? e.transient : isDatabaseUnavailable(e);
}

/** The failure reason of a thrown error: BSS refusing the boot parameters is its own; else `fallback`. */
export function reasonOf(e: unknown, fallback: FailureReason = 'service_unavailable'): FailureReason {
  if (e instanceof ServiceError && e.service === 'bss' && !e.transient) return 'boot_parameters_failed';
  return fallback;
}

/** A thrown error as an outcome: transient errors continue (retried: the job again), permanent ones fail. */
export function fromError(e: unknown, fallback: FailureReason = 'service_unavailable'): Outcome {
  const problem = { error: errorText(e), reason: reasonOf(e, fallback) };
  return isTransient(e) ? { kind: 'continue', problem, retry: true } : failed(problem);
}
