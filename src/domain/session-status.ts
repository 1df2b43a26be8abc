/**
 * BOS's session extended status (reference §2.2) from counts the database aggregates. C = components
 * the session owns, S = components it staged, N = |C| + |S|; percentages of N rounded to 2 decimals.
 */
import { formatDuration } from './age.ts';
import type { SessionStateName } from './sessions.ts';

/** Ids shown per error group, as BOS. */
export const MAX_IDS_PER_GROUP = 10;

export interface StatusCounts {
  /** |C| */
  owned: number;
  /** |S| */
  staged: number;
  /**
   * C done and succeeded: computed status stable, phase '', disabled by the status operator's decision,
   * and no deploy of its session still in flight (db/sessions/status.ts `succeeded`). BOS counts every
   * `stable` component, which includes a node in a disk deploy phase and one not yet decided; bootorch
   * never counts a node deploying, in transit or undecided as successful, so percentComplete reaches 100
   * only when every node is done.
   */
  successful: number;
  /** C in status failed */
  failed: number;
  /** C enabled, not on hold, in that phase */
  poweringOn: number;
  poweringOff: number;
  configuring: number;
  /** In a disk deploy phase (domain/deploy-decision.ts). */
  deploying: number;
}

export interface ComponentGroup {
  key: string;
  count: number;
  /** Up to MAX_IDS_PER_GROUP ids, sorted. */
  ids: string[];
  /** BOS's `list`: the ids comma-joined, `...` appended when the group has more. */
  list: string;
}

export interface SessionExtendedStatus {
  name: string;
  status: SessionStateName;
  managedComponentsCount: number;
  percentSuccessful: number;
  percentFailed: number;
  percentStaged: number;
  phases: {
    percentComplete: number;
    percentPoweringOn: number;
    percentPoweringOff: number;
    percentConfiguring: number;
    /** Snapshots saved before disk deploys lack it: read as 0 (db/sessions/status.ts). */
    percentDeploying: number;
  };
  errorSummary: ComponentGroup[];
  failureReasons: ComponentGroup[];
  timing: { startTime: string; endTime: string | null; duration: string };
  paused: boolean;
  pauseReason: string | null;
  /** Set when this is a saved snapshot. */
  savedAt: string | null;
}

/** A saved snapshot as stored (session_status_snapshots.data): those saved before disk deploys lack percentDeploying. */
export type StoredSessionStatus = Omit<SessionExtendedStatus, 'phases'> & {
  phases: Omit<SessionExtendedStatus['phases'], 'percentDeploying'> & { percentDeploying?: number };
};

export interface SessionFacts {
  name: string;
  status: SessionStateName;
  startTime: Date;
  endTime: Date | null;
  paused: boolean;
  pauseReason: string | null;
}

/** part of total in percent, 2 decimals; 0 when total is 0. */
export function percent(part: number, total: number): number {
  if (total <= 0) return 0;
  return Math.round((part * 100 * 100) / total) / 100;
}

export function componentGroup(key: string, count: number, ids: readonly string[]): ComponentGroup {
  const shown = [...ids].sort().slice(0, MAX_IDS_PER_GROUP);
  return { key, count, ids: shown, list: shown.join(',') + (count > MAX_IDS_PER_GROUP ? '...' : '') };
}

export function buildExtendedStatus(
  s: SessionFacts,
  c: StatusCounts,
  errors: ComponentGroup[],
  reasons: ComponentGroup[],
  now: Date,
): SessionExtendedStatus {
  const n = c.owned + c.staged;
  // A live session's duration runs to now (BOS); a complete one's to its end.
  const end = s.endTime ?? now;
  return {
    name: s.name,
    status: s.status,
    managedComponentsCount: n,
    percentSuccessful: percent(c.successful, n),
    percentFailed: percent(c.failed, n),
    percentStaged: percent(c.staged, n),
    phases: {
      percentComplete: percent(c.successful + c.failed, n),
      percentPoweringOn: percent(c.poweringOn, n),
      percentPoweringOff: percent(c.poweringOff, n),
      percentConfiguring: percent(c.configuring, n),
      percentDeploying: percent(c.deploying, n),
    },
    errorSummary: errors,
    failureReasons: reasons,
    timing: {
      startTime: s.startTime.toISOString(),
      endTime: s.endTime ? s.endTime.toISOString() : null,
      duration: formatDuration(end.getTime() - s.startTime.getTime()),
    },
    paused: s.paused,
    pauseReason: s.pauseReason,
    savedAt: null,
  };
}
