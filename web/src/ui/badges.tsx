/**
 * Status words with a shape, never colour alone: a session's result (the API's Session.result, the one
 * rule in src/domain/session-result.ts; the console never derives it) and a node's status.
 */
import type { SessionResult } from '../gql/graphql.ts';
import { STATUS_COLOR, STATUS_LABEL, mapStatus, type Status } from '../map/colors.ts';

const RESULT: Record<SessionResult, { icon: string; words: string }> = {
  PENDING: { icon: '◌', words: 'pending' },
  RUNNING: { icon: '▶', words: 'running' },
  PAUSED: { icon: '❚❚', words: 'paused' },
  ABORTING: { icon: '■', words: 'aborting' },
  ABORTED: { icon: '■', words: 'aborted' },
  COMPLETE: { icon: '✔', words: 'complete' },
  COMPLETE_WITH_FAILURES: { icon: '⚠', words: 'complete with failures' },
  FAILED: { icon: '✖', words: 'failed' },
};

export function ResultBadge({ result, title }: { result: SessionResult; title?: string }) {
  const r = RESULT[result];
  return (
    <span className={`state ${result.toLowerCase()}`} data-testid="result" data-result={result} title={title}>
      <span aria-hidden="true">{r.icon} </span>
      {r.words}
    </span>
  );
}

/** A node's status as the map shows it: a swatch (decoration) and its words. */
export function NodeStatus({ status, phase }: { status: string; phase: string }) {
  const s = mapStatus(status, phase) as Status;
  return (
    <span className="nodestatus">
      <i aria-hidden="true" style={{ background: STATUS_COLOR[s] }} /> {STATUS_LABEL[s] ?? status.toLowerCase().replace(/_/g, ' ')}
    </span>
  );
}

export const words = (s: string | null | undefined): string => (s ?? '').toLowerCase().replace(/_/g, ' ');

/** "12 s ago", "4 min ago", "3 h ago". */
export function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 3600)} h ago`;
}
