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
  PlannedAction: {
    POWER_CYCLE: 'power_cycle', POWER_ON: 'power_on', POWER_OFF: 'power_off', CONFIGURE_ONLY: 'configure_only',
    NOTHING: 'nothing', SKIP: 'skip', UNKNOWN: 'unknown',
  },
  SkipReason: {
    EXCLUDED_BY_LIMIT: 'excluded_by_limit', LOCKED: 'locked', ANOTHER_TENANT: 'another_tenant', WRONG_ARCH: 'wrong_arch',
    DISABLED_IN_INVENTORY: 'disabled_in_inventory', NOT_IN_INVENTORY: 'not_in_inventory', NOT_A_COMPONENT: 'not_a_component',
  },
  WaitKind: {
    NOTHING: 'nothing', FAILED: 'failed', DISABLED: 'disabled', SESSION_PAUSED: 'session_paused',
    ROLLOUT_ADMISSION: 'rollout_admission', STATUS_EVALUATION: 'status_evaluation', POWER_ON: 'power_on',
    POWER_ON_OR_BOOT_REPORT: 'power_on_or_boot_report', POWER_OFF: 'power_off', FORCEFUL_POWER_OFF: 'forceful_power_off',
    CONFIGURATION: 'configuration',
  },
} as const;
