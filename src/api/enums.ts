/**
 * GraphQL enum value -> the string stored in the database (BOS's spelling). Used twice: by codegen.ts,
 * so the generated TypeScript types are the stored strings, and as the enum resolvers at run time.
 */
export const enumValues = {
  ComponentPhase: { NONE: '', POWERING_ON: 'powering_on', POWERING_OFF: 'powering_off', CONFIGURING: 'configuring' },
  ComponentStatus: {
    STABLE: 'stable', POWER_ON_PENDING: 'power_on_pending', POWER_ON_CALLED: 'power_on_called',
    POWER_OFF_PENDING: 'power_off_pending', POWER_OFF_GRACEFULLY_CALLED: 'power_off_gracefully_called',
    POWER_OFF_FORCEFULLY_CALLED: 'power_off_forcefully_called', CONFIGURING: 'configuring',
    ON_HOLD: 'on_hold', FAILED: 'failed', QUEUED: 'queued',
  },
  StatusOverride: { NONE: '', ON_HOLD: 'on_hold', FAILED: 'failed', QUEUED: 'queued' },
  SessionOperation: { BOOT: 'boot', REBOOT: 'reboot', SHUTDOWN: 'shutdown' },
  SessionState: { PENDING: 'pending', RUNNING: 'running', COMPLETE: 'complete' },
  Arch: { X86: 'X86', ARM: 'ARM', OTHER: 'Other', UNKNOWN: 'Unknown' },
  HealthState: { OK: 'ok', NOT_AVAILABLE: 'not_available', UNKNOWN: 'unknown' },
  ReportRefusal: { CONFLICT: 'CONFLICT', NOT_FOUND: 'NOT_FOUND' },
} as const;
