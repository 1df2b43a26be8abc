/**
 * Where a session stands, in one word an on-call engineer can act on: the badge of the console, the
 * CLI's exit, the metrics' `result` label and the end-of-session log line all say the same. Pure; the
 * session row's facts and its count of failed nodes are all it needs.
 *
 * BOS has only pending / running / complete, and calls an aborted session and one whose every node
 * failed "complete"; these words never do.
 */
export const SESSION_RESULTS = [
  'pending',
  'running',
  'paused',
  'aborting',
  'aborted',
  'complete',
  'complete_with_failures',
  'failed',
] as const;
export type SessionResult = (typeof SESSION_RESULTS)[number];

/** The results of a session that has ended (status complete). */
export const ENDED_RESULTS = ['aborted', 'complete', 'complete_with_failures', 'failed'] as const satisfies readonly SessionResult[];
export type EndedResult = (typeof ENDED_RESULTS)[number];

export interface SessionResultFacts {
  status: 'pending' | 'running' | 'complete';
  paused: boolean;
  aborted: boolean;
  /** The session's own error (setup could not run it: no template, no node matched, ...). */
  hasError: boolean;
  /** Nodes of the session in status failed. */
  failedNodes: number;
}

export function sessionResult(s: SessionResultFacts): SessionResult {
  if (s.status === 'complete') {
    if (s.aborted) return 'aborted';
    if (s.hasError) return 'failed';
    return s.failedNodes > 0 ? 'complete_with_failures' : 'complete';
  }
  if (s.aborted) return 'aborting';
  if (s.status === 'pending') return 'pending';
  return s.paused ? 'paused' : 'running';
}

/** What each result means, for people (console legend, docs). */
export const SESSION_RESULT_WORDS: Record<SessionResult, string> = {
  pending: 'waiting for its setup to run',
  running: 'walking its nodes',
  paused: 'paused: no new action starts until it is resumed',
  aborting: 'aborted by an operator; its nodes are being released',
  aborted: 'ended by an operator before its nodes were done',
  complete: 'every node reached its desired state',
  complete_with_failures: 'ended with some nodes failed (see their reasons)',
  failed: 'could not run (see the session error)',
};
