/**
 * GraphQL enum value -> the string stored in the database (BOS's spelling). Used twice: by codegen.ts,
 * so the generated TypeScript types are the stored strings, and as the enum resolvers at run time.
 */
export const enumValues = {
  ComponentPhase: {
    NONE: '',
    POWERING_ON: 'powering_on',
    POWERING_OFF: 'powering_off',
    CONFIGURING: 'configuring',
    DEPLOYING: 'deploying',
    WRITING: 'writing',
    SWITCHING_TO_DISK: 'switching_to_disk',
    BOOTING_DISK: 'booting_disk',
  },
  ComponentStatus: {
    STABLE: 'stable',
    POWER_ON_PENDING: 'power_on_pending',
    POWER_ON_CALLED: 'power_on_called',
    POWER_OFF_PENDING: 'power_off_pending',
    POWER_OFF_GRACEFULLY_CALLED: 'power_off_gracefully_called',
    POWER_OFF_FORCEFULLY_CALLED: 'power_off_forcefully_called',
    CONFIGURING: 'configuring',
    ON_HOLD: 'on_hold',
    FAILED: 'failed',
    QUEUED: 'queued',
  },
  StatusOverride: { NONE: '', ON_HOLD: 'on_hold', FAILED: 'failed', QUEUED: 'queued' },
  SessionOperation: { BOOT: 'boot', REBOOT: 'reboot', SHUTDOWN: 'shutdown', RESCUE: 'rescue', UNRESCUE: 'unrescue' },
  SessionState: { PENDING: 'pending', RUNNING: 'running', COMPLETE: 'complete' },
  Arch: { X86: 'X86', ARM: 'ARM', OTHER: 'Other', UNKNOWN: 'Unknown' },
  HealthState: { OK: 'ok', NOT_AVAILABLE: 'not_available', UNKNOWN: 'unknown' },
  ReportRefusal: { CONFLICT: 'CONFLICT', NOT_FOUND: 'NOT_FOUND' },
  ImageFormat: { RAW: 'raw', QCOW2: 'qcow2' },
  DeployHeartbeatState: {
    STARTING: 'starting',
    DOWNLOADING: 'downloading',
    VERIFYING: 'verifying',
    WRITING: 'writing',
    WRITTEN: 'written',
    ACTIVE: 'active',
    FAILED: 'failed',
  },
  DeployFailure: {
    CHECKSUM_MISMATCH: 'checksum_mismatch',
    NO_MATCHING_DISK: 'no_matching_disk',
    WRITE_ERROR: 'write_error',
    IMAGE_UNREACHABLE: 'image_unreachable',
  },
  PlannedAction: {
    POWER_CYCLE: 'power_cycle',
    POWER_ON: 'power_on',
    POWER_OFF: 'power_off',
    CONFIGURE_ONLY: 'configure_only',
    NOTHING: 'nothing',
    SKIP: 'skip',
    UNKNOWN: 'unknown',
  },
  SkipReason: {
    EXCLUDED_BY_LIMIT: 'excluded_by_limit',
    LOCKED: 'locked',
    ANOTHER_TENANT: 'another_tenant',
    WRONG_ARCH: 'wrong_arch',
    DISABLED_IN_INVENTORY: 'disabled_in_inventory',
    NOT_IN_INVENTORY: 'not_in_inventory',
    NOT_A_COMPONENT: 'not_a_component',
    QUARANTINED: 'quarantined',
    RESCUED: 'rescued',
    NOT_RESCUED: 'not_rescued',
  },
  WaitKind: {
    NOTHING: 'nothing',
    FAILED: 'failed',
    DISABLED: 'disabled',
    SESSION_PAUSED: 'session_paused',
    ROLLOUT_ADMISSION: 'rollout_admission',
    STATUS_EVALUATION: 'status_evaluation',
    POWER_ON: 'power_on',
    POWER_ON_OR_BOOT_REPORT: 'power_on_or_boot_report',
    POWER_OFF: 'power_off',
    FORCEFUL_POWER_OFF: 'forceful_power_off',
    CONFIGURATION: 'configuration',
    POWER_UNKNOWN: 'power_unknown',
    DISK_DEPLOY: 'disk_deploy',
    OUTSIDE_SERVICE: 'outside_service',
  },
  SessionResult: {
    PENDING: 'pending',
    RUNNING: 'running',
    PAUSED: 'paused',
    ABORTING: 'aborting',
    ABORTED: 'aborted',
    COMPLETE: 'complete',
    COMPLETE_WITH_FAILURES: 'complete_with_failures',
    FAILED: 'failed',
  },
  SuggestedAction: { NONE: 'none', RETRY: 'retry', ENABLE: 'enable', RESUME_SESSION: 'resume_session' },
  ComponentOrder: {
    ID: 'id',
    STATUS: 'status',
    PHASE: 'phase',
    FAILURE_REASON: 'failure_reason',
    SESSION: 'session',
    LAST_CHANGE: 'updated_at',
  },
} as const;

type EnumName = keyof typeof enumValues;
/** The stored strings of GraphQL enum `E` (the same union codegen generates for it). */
type EnumValue<E extends EnumName> = Extract<(typeof enumValues)[E][keyof (typeof enumValues)[E]], string>;

const storedValues = new Map<string, ReadonlySet<string>>(Object.entries(enumValues).map(([e, m]) => [e, new Set(Object.values(m))]));

/** Whether `v` is one of the stored strings of enum `e`. */
export function isEnumValue<E extends EnumName>(e: E, v: string): v is EnumValue<E> {
  return storedValues.get(e)!.has(v);
}

/**
 * A stored string (a text column) as a value of enum `e`, for a resolver's result. The columns'
 * check constraints keep them inside the enum; a value outside it is an error naming `field`.
 */
export function enumValue<E extends EnumName>(e: E, v: string, field: string): EnumValue<E> {
  if (isEnumValue(e, v)) return v;
  throw new Error(`${field}: "${v}" is not a value of ${e}`);
}
