/** Status colours of the map and its legend (the computed statuses, and DEPLOYING: see mapStatus) (ABGR words for ImageData on little-endian machines, and CSS). */
export const STATUSES = [
  'STABLE',
  'POWER_OFF_PENDING',
  'POWER_OFF_GRACEFULLY_CALLED',
  'POWER_OFF_FORCEFULLY_CALLED',
  'POWER_ON_PENDING',
  'POWER_ON_CALLED',
  'CONFIGURING',
  'DEPLOYING',
  'QUEUED',
  'ON_HOLD',
  'FAILED',
] as const;
export type Status = (typeof STATUSES)[number];

export const STATUS_COLOR: Record<Status, string> = {
  STABLE: '#3fae5a',
  POWER_OFF_PENDING: '#f2b134',
  POWER_OFF_GRACEFULLY_CALLED: '#ef8a17',
  POWER_OFF_FORCEFULLY_CALLED: '#d9480f',
  POWER_ON_PENDING: '#74c0fc',
  POWER_ON_CALLED: '#1c7ed6',
  CONFIGURING: '#9c6ade',
  DEPLOYING: '#15aabf',
  QUEUED: '#adb5bd',
  ON_HOLD: '#868e96',
  FAILED: '#e03131',
};

export const STATUS_LABEL: Record<Status, string> = {
  STABLE: 'stable',
  POWER_OFF_PENDING: 'power-off pending',
  POWER_OFF_GRACEFULLY_CALLED: 'powering off',
  POWER_OFF_FORCEFULLY_CALLED: 'forced off',
  POWER_ON_PENDING: 'power-on pending',
  POWER_ON_CALLED: 'powering on',
  CONFIGURING: 'configuring',
  DEPLOYING: 'deploying',
  QUEUED: 'queued',
  ON_HOLD: 'on hold',
  FAILED: 'failed',
};

export const statusIndex = (s: string): number => Math.max(0, STATUSES.indexOf(s as Status));

/** The disk deploy phases (GraphQL ComponentPhase). */
const DEPLOY_PHASES = new Set(['DEPLOYING', 'WRITING', 'SWITCHING_TO_DISK', 'BOOTING_DISK']);

/**
 * What the map shows for a node: its status, except that a node in a disk deploy phase is deploying.
 * BOS's computed status says STABLE there, and a map that showed it green would count it done.
 */
export const mapStatus = (status: string, phase: string): string =>
  status === 'STABLE' && DEPLOY_PHASES.has(phase) ? 'DEPLOYING' : status;

function rgba(hex: string, alpha: number): number {
  const v = parseInt(hex.slice(1), 16);
  return ((alpha << 24) | ((v & 0xff) << 16) | (v & 0xff00) | (v >> 16)) >>> 0;
}

/** Pixel words per status index: full, and dimmed for nodes a filter leaves out. */
export const PIXEL = STATUSES.map((s) => rgba(STATUS_COLOR[s], 255));
export const PIXEL_DIM = STATUSES.map((s) => rgba(STATUS_COLOR[s], 40));
