/**
 * Safer large operations: a node that failed its last K sessions in a row (the option
 * quarantine_after_failed_sessions, 0 = off) is quarantined: new sessions leave it out unless their
 * limit names it (domain/limit.ts namedNodes), until an operator releases it.
 *
 * The counting rule, applied to each node a session owned when the session completes:
 * - failed for a reason of its own: one more session failed in a row (the failure is kept);
 * - done and succeeded: the run is over (count 0, failures forgotten);
 * - anything else (failed because the session was aborted or an outside service failed, or left
 *   disabled without a result): the count stays as it is.
 */
import type { FailureReason } from './failures.ts';

/** The failures of a run kept on the node, oldest first: the option's maximum, so the K-th is always there. */
export const QUARANTINE_FAILURES_KEPT = 20;

/** Failures that say nothing about the node: an operator's abort, an outside service down, bootorch's own limits. */
const NOT_THE_NODES: readonly FailureReason[] = ['aborted', 'service_unavailable', 'local_resources'];

/** One session a node failed in, as kept on the node. */
export interface SessionFailure {
  session: string;
  /** ISO time the session completed. */
  at: string;
  /** Its failure reason (domain/failures.ts) and error text. */
  reason: string;
  error: string;
}

/** What the node was left as when its session completed. */
export interface NodeSessionEnd {
  failed: boolean;
  succeeded: boolean;
  reason: string;
  error: string;
}

export interface FailureRun {
  failedSessions: number;
  failures: SessionFailure[];
}

/** The run after a session's end (the counting rule above); the same object when nothing changes. */
export function countSessionEnd(run: FailureRun, end: NodeSessionEnd, session: string, at: Date): FailureRun {
  if (end.failed && !NOT_THE_NODES.includes(end.reason as FailureReason)) {
    const failure: SessionFailure = { session, at: at.toISOString(), reason: end.reason, error: end.error.slice(0, 300) };
    const failures = run.failures.length < QUARANTINE_FAILURES_KEPT ? [...run.failures, failure] : run.failures;
    return { failedSessions: run.failedSessions + 1, failures };
  }
  if (end.succeeded && !end.failed && run.failedSessions > 0) return { failedSessions: 0, failures: [] };
  return run;
}

export interface Quarantine {
  /** When the K-th failure of the run was counted. */
  since: string;
  failedSessions: number;
  threshold: number;
  /** The failures that put it there (the first K of the run). */
  failures: SessionFailure[];
}

/** The node's quarantine under threshold `k` (0: off), or null when it is not quarantined. */
export function quarantineOf(run: FailureRun, k: number): Quarantine | null {
  if (k <= 0 || run.failedSessions < k) return null;
  const failures = run.failures.slice(0, k);
  return { since: failures.at(-1)?.at ?? '', failedSessions: run.failedSessions, threshold: k, failures };
}

/** Explain's words for a quarantine, with what to do about it. */
export function quarantineWords(id: string, q: Quarantine): string {
  const which = q.failures.map((f) => `${f.session} (${f.reason || 'failed'})`).join(', ');
  return (
    `quarantined since ${q.since}: failed ${q.failedSessions} sessions in a row (quarantine_after_failed_sessions is ${q.threshold}): ${which}. ` +
    `New sessions leave it out unless their limit names ${id}; release it (bootorch node release ${id}) once it is repaired.`
  );
}
