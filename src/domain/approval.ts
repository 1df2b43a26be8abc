/**
 * Safer large operations: a session over more nodes than the option approval_node_threshold, or whose
 * limit names `all`, waits for a second admin's approval before its first action. The reason is
 * the words explain, the CLI and the console show.
 */
import type { Options } from './options.ts';

/** Why a session of `nodes` nodes with this limit needs approval; '' when it does not (threshold 0: never). */
export function approvalReason(limit: string, nodes: number, o: Pick<Options, 'approval_node_threshold'>): string {
  const n = o.approval_node_threshold;
  if (n <= 0 || nodes === 0) return '';
  if (nodes > n) return `${nodes} nodes, more than approval_node_threshold (${n}): a second admin must approve it`;
  if (namesAll(limit)) return `limit "all": a second admin must approve it`;
  return '';
}

/** A limit with an `all` (or `*`) term that is not an exclusion (`!all`). */
const namesAll = (limit: string): boolean =>
  limit
    .split(',')
    .map((t) => t.trim().replace(/^&/, ''))
    .some((t) => t === 'all' || t === '*');

export type ApprovalRefusal = 'not_waiting' | 'own_session' | 'already_approved';

/** Whether `actor` may approve a session created by `createdBy` in this state; null when it may. */
export function approvalRefusal(
  s: { approvalNeeded: string; approvedBy: string | null; createdBy: string | null; status: string },
  actor: string,
): ApprovalRefusal | null {
  if (s.approvedBy) return 'already_approved';
  if (!s.approvalNeeded || s.status !== 'pending') return 'not_waiting';
  if (s.createdBy !== null && s.createdBy === actor) return 'own_session';
  return null;
}
