/**
 * Rollout policies (Beyond BOS): how many nodes of a session may be between "action started" and
 * "done" at once, a canary that must succeed first, and a failure budget that pauses the session.
 */
export interface RolloutPolicy {
  /** A count ("50") or a percent of the session's nodes ("10%"). */
  maxInFlight?: string | null;
  /** The first K nodes must reach the desired state before any other node starts. */
  canary?: number | null;
  /** Failures beyond this count ("5") or percent ("2%") pause the session. */
  failureBudget?: string | null;
  /** Escalation overrides (seconds) within the option ranges. */
  maxPowerOffWaitTime?: number | null;
  maxPowerOnWaitTime?: number | null;
  maxBootWaitTime?: number | null;
  retryPolicy?: number | null;
  powerOnWaveSize?: number | null;
  powerOnWaveIntervalSeconds?: number | null;
}

const AMOUNT_RE = /^(\d+)(%?)$/;

export function isAmount(s: string): boolean {
  const m = AMOUNT_RE.exec(s.trim());
  return !!m && (m[2] !== '%' || Number(m[1]) <= 100);
}

/** Resolve "50" or "10%" against a total; percentages round up so "1%" of 10 nodes is 1, never 0. */
export function resolveAmount(s: string | null | undefined, total: number): number | null {
  if (s === null || s === undefined || s.trim() === '') return null;
  const m = AMOUNT_RE.exec(s.trim());
  if (!m) return null;
  const n = Number(m[1]);
  return m[2] === '%' ? Math.ceil((n * total) / 100) : n;
}

/** Whether a session with this policy has to queue its nodes at setup. */
export function gated(p: RolloutPolicy | null | undefined): boolean {
  return !!p && ((p.maxInFlight ?? '') !== '' || (p.canary ?? 0) > 0);
}
