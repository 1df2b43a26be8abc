/**
 * The bootorch database, as drizzle tables. Migrations under drizzle/ are generated from this file
 * (`npm run db:generate`) and applied at start-up; they are append-only.
 *
 * Components are real columns, not one JSON blob, so that operators select with indexed, set-based
 * SQL. The computed status of BOS (reference §1.4) is a stored generated column, so "every component
 * in power_on_pending" is an index scan rather than a computation over every row.
 * Enumerations are text + CHECK rather than pg enums: adding an enum value and using it in one
 * migrate() run fails inside its single transaction.
 */
import { sql } from 'drizzle-orm';
import {
  pgTable,
  text,
  boolean,
  integer,
  timestamp,
  jsonb,
  bigserial,
  primaryKey,
  index,
  uniqueIndex,
  check,
  bigint,
  doublePrecision,
} from 'drizzle-orm/pg-core';
import type { SessionFailure } from '../domain/quarantine.ts';
import type { StoredSessionStatus } from '../domain/session-status.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const sessionTemplates = pgTable(
  'session_templates',
  {
    /** '' when the template has no tenant; the API shows it as null. */
    tenantKey: text('tenant_key').notNull().default(''),
    name: text('name').notNull(),
    tenant: text('tenant'),
    description: text('description'),
    enableCfs: boolean('enable_cfs').notNull().default(true),
    cfsConfiguration: text('cfs_configuration'),
    /** Map of boot set name to boot set, as BOS stores it (validated at the edge). */
    bootSets: jsonb('boot_sets').notNull().$type<Record<string, unknown>>(),
    /** Rollout policy defaults for sessions of this template (Beyond BOS). */
    rollout: jsonb('rollout').$type<Record<string, unknown>>(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantKey, t.name] })],
);

export const sessions = pgTable(
  'sessions',
  {
    tenantKey: text('tenant_key').notNull().default(''),
    name: text('name').notNull(),
    tenant: text('tenant'),
    operation: text('operation').notNull(),
    templateName: text('template_name').notNull(),
    limit: text('limit').notNull().default(''),
    stage: boolean('stage').notNull().default(false),
    includeDisabled: boolean('include_disabled').notNull().default(false),
    /** Comma-joined xnames, written once when setup finishes, as BOS does. */
    components: text('components').notNull().default(''),
    status: text('status').notNull().default('pending'),
    startTime: ts('start_time').notNull().defaultNow(),
    endTime: ts('end_time'),
    error: text('error'),
    /** Effective rollout policy (template's, overridden by the session's). */
    rollout: jsonb('rollout').$type<Record<string, unknown>>(),
    paused: boolean('paused').notNull().default(false),
    pauseReason: text('pause_reason'),
    aborted: boolean('aborted').notNull().default(false),
    /** Rollout progress: a resume accepted the canary (its failures no longer pause the session). */
    canaryAccepted: boolean('canary_accepted').notNull().default(false),
    /** Rollout progress: failed nodes when the session was last resumed (the budget counts failures since). */
    failedAtResume: integer('failed_at_resume').notNull().default(0),
    createdBy: text('created_by'),
    /**
     * Why the session waits for a second admin's approval before its first action (more nodes than
     * the option approval_node_threshold, or every node); '' when it needs none. Set by its setup.
     */
    approvalNeeded: text('approval_needed').notNull().default(''),
    /** The admin who approved it (never its creator); null while it waits or when it needs none. */
    approvedBy: text('approved_by'),
    approvedAt: ts('approved_at'),
    /**
     * W3C traceparent of the request that created the session (with tracing off, one carrying the
     * trace id of the request's log lines; null for a session stored without): its setup, action jobs
     * and outside calls join that trace, and the engine's lines about it carry its trace id
     * (src/observability/tracing.ts, logging.ts).
     */
    traceContext: text('trace_context'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantKey, t.name] }),
    index('sessions_status_idx').on(t.status, t.startTime),
    check('sessions_operation_ck', sql`${t.operation} in ('boot','reboot','shutdown','rescue','unrescue')`),
    check('sessions_status_ck', sql`${t.status} in ('pending','running','complete')`),
  ],
);

export const components = pgTable(
  'components',
  {
    id: text('id').primaryKey(),
    enabled: boolean('enabled').notNull().default(false),
    phase: text('phase').notNull().default(''),
    statusOverride: text('status_override').notNull().default(''),
    /** BOS's computed status (reference §1.4), kept by Postgres. */
    status: text('status')
      .notNull()
      .generatedAlwaysAs(sql`CASE
    WHEN status_override <> '' THEN status_override
    WHEN phase = 'powering_on' THEN CASE WHEN last_action = 'powering_on' AND NOT last_action_failed
      THEN 'power_on_called' ELSE 'power_on_pending' END
    WHEN phase = 'powering_off' THEN CASE
      WHEN last_action = 'powering_off_gracefully' THEN 'power_off_gracefully_called'
      WHEN last_action = 'powering_off_forcefully' THEN 'power_off_forcefully_called'
      ELSE 'power_off_pending' END
    WHEN phase = 'configuring' THEN 'configuring'
    ELSE 'stable' END`),
    lastAction: text('last_action').notNull().default(''),
    lastActionFailed: boolean('last_action_failed').notNull().default(false),
    lastActionAt: ts('last_action_at'),

    desiredKernel: text('desired_kernel').notNull().default(''),
    desiredKernelParameters: text('desired_kernel_parameters').notNull().default(''),
    desiredInitrd: text('desired_initrd').notNull().default(''),
    desiredConfiguration: text('desired_configuration').notNull().default(''),
    desiredBssToken: text('desired_bss_token').notNull().default(''),
    desiredUpdatedAt: ts('desired_updated_at'),
    /**
     * The rescue image while the node is rescued (docs/rescue.md): the engine drives it to these
     * instead of its desired boot artifacts, which stay as they were; '' when not rescued.
     */
    rescueKernel: text('rescue_kernel').notNull().default(''),
    rescueKernelParameters: text('rescue_kernel_parameters').notNull().default(''),
    rescueInitrd: text('rescue_initrd').notNull().default(''),

    actualKernel: text('actual_kernel').notNull().default(''),
    actualKernelParameters: text('actual_kernel_parameters').notNull().default(''),
    actualInitrd: text('actual_initrd').notNull().default(''),
    actualBssToken: text('actual_bss_token').notNull().default(''),
    actualUpdatedAt: ts('actual_updated_at'),

    stagedKernel: text('staged_kernel').notNull().default(''),
    stagedKernelParameters: text('staged_kernel_parameters').notNull().default(''),
    stagedInitrd: text('staged_initrd').notNull().default(''),
    stagedConfiguration: text('staged_configuration').notNull().default(''),
    stagedSession: text('staged_session').notNull().default(''),
    stagedUpdatedAt: ts('staged_updated_at'),

    powerOnAttempts: integer('power_on_attempts').notNull().default(0),
    powerOffGracefulAttempts: integer('power_off_graceful_attempts').notNull().default(0),
    powerOffForcefulAttempts: integer('power_off_forceful_attempts').notNull().default(0),

    error: text('error').notNull().default(''),
    /** Closed failure reason (domain/failures.ts) when the component failed; '' otherwise. */
    failureReason: text('failure_reason').notNull().default(''),
    /** First unknown power read of the current run of them (status rows U1, U2); null when the power was last read. */
    powerUnknownSince: ts('power_unknown_since'),
    session: text('session').notNull().default(''),
    /** Tenant of the owning session ('' = none); sessions are namespaced by tenant. */
    sessionTenant: text('session_tenant').notNull().default(''),
    retryPolicy: integer('retry_policy'),
    /** FIFO position in a rollout queue; null when the component is not waiting to be admitted. */
    queuedSeq: bigint('queued_seq', { mode: 'number' }),
    /** Power drift (operators/power-drift.ts): a done node found with power other than bootorch left it; null when none. */
    powerDrift: jsonb('power_drift').$type<PowerDriftMark>(),
    /**
     * Sessions in a row this node failed in, counted when each session completes (domain/quarantine.ts:
     * a failure of its own adds one, a success resets it). At the option quarantine_after_failed_sessions
     * or above, new sessions leave it out unless their limit names it; releaseQuarantine resets it.
     */
    failedSessions: integer('failed_sessions').notNull().default(0),
    /** The failures of that run, oldest first (the first QUARANTINE_FAILURES_KEPT); null when none. */
    sessionFailures: jsonb('session_failures').$type<SessionFailure[]>(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('components_enabled_status_idx').on(t.status, t.id).where(sql`enabled`),
    // Failed nodes by reason for the metrics, enabled or not (a failed node is disabled), without reading every row.
    index('components_failed_reason_idx').on(t.failureReason).where(sql`status = 'failed'`),
    index('components_session_idx').on(t.session, t.enabled),
    // Nodes with a run of failed sessions (quarantine: the plan, the metrics' gauge): few rows, not every row.
    index('components_failed_sessions_idx').on(t.failedSessions).where(sql`failed_sessions > 0`),
    // The node table's sort orders, keyset on (column, id) (db/components/read.ts). status,
    // failure_reason and session are indexed already and phase changes only with status, so no write
    // that was a HOT update stops being one; updated_at, written by every write, has no index: that
    // order sorts what the filters select.
    index('components_status_id_idx').on(t.status, t.id),
    index('components_phase_id_idx').on(t.phase, t.id),
    index('components_reason_id_idx').on(t.failureReason, t.id),
    index('components_session_id_idx').on(t.session, t.id),
    index('components_staged_session_idx').on(t.stagedSession).where(sql`staged_session <> ''`),
    index('components_actual_updated_idx')
      .on(t.actualUpdatedAt)
      .where(sql`actual_kernel <> '' OR actual_initrd <> '' OR actual_kernel_parameters <> ''`),
    check(
      'components_phase_ck',
      sql`${t.phase} in ('', 'powering_on', 'powering_off', 'configuring', 'deploying', 'writing', 'switching_to_disk', 'booting_disk')`,
    ),
    check('components_override_ck', sql`${t.statusOverride} in ('', 'on_hold', 'failed', 'queued')`),
  ],
);

/** BSS referral token -> the boot artifacts bootorch set with it (BOS's Redis DB 4). */
export const bootArtifacts = pgTable(
  'boot_artifacts',
  {
    token: text('token').primaryKey(),
    kernel: text('kernel').notNull(),
    kernelParameters: text('kernel_parameters').notNull(),
    initrd: text('initrd').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('boot_artifacts_created_idx').on(t.createdAt)],
);

/** The single options row; its JSON is validated by domain/options.ts on read and write. */
export const options = pgTable(
  'options',
  {
    id: integer('id').primaryKey().default(1),
    data: jsonb('data').notNull().$type<Record<string, unknown>>(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [check('options_single_row_ck', sql`${t.id} = 1`)],
);

/** Extended status snapshot saved when a session completes (BOS's DB 5). */
export const sessionStatusSnapshots = pgTable(
  'session_status_snapshots',
  {
    tenantKey: text('tenant_key').notNull().default(''),
    name: text('name').notNull(),
    data: jsonb('data').notNull().$type<StoredSessionStatus>(),
    savedAt: ts('saved_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantKey, t.name] })],
);

/**
 * Append-only timeline of every component: transitions, actions, errors, reports.
 * `id` is the cursor subscribers resume from.
 */
export const componentEvents = pgTable(
  'component_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    // When the event's row was written (clock_timestamp, not the transaction's start: a session's
    // setup writes thousands of rows in one transaction, and its events were stamped before its work).
    at: ts('at').notNull().default(sql`clock_timestamp()`),
    componentId: text('component_id').notNull(),
    session: text('session').notNull().default(''),
    sessionTenant: text('session_tenant').notNull().default(''),
    /** transition | action | error | report | setup | manual | failed | rollout */
    kind: text('kind').notNull(),
    actor: text('actor').notNull(),
    fromPhase: text('from_phase'),
    toPhase: text('to_phase'),
    fromStatus: text('from_status'),
    toStatus: text('to_status'),
    action: text('action'),
    error: text('error'),
    reason: text('reason'),
    data: jsonb('data').$type<Record<string, unknown>>(),
  },
  (t) => [index('component_events_component_idx').on(t.componentId, t.id), index('component_events_session_idx').on(t.session, t.id)],
);

/**
 * The components an action job's batch acted on, one row per batch, written as the batch completes:
 * an action writes no component row, so the status pass after it reads these components as changed
 * too (db/components/select.ts writtenSince). Deleted by the first pass that completes having seen them.
 */
export const actedBatches = pgTable('acted_batches', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  ids: text('ids').array().notNull(),
  at: ts('at').notNull().defaultNow(),
});

/** Tenants own sets of xnames (BOS reads them from TAPMS; bootorch keeps them here). */
export const tenantXnames = pgTable(
  'tenant_xnames',
  {
    tenant: text('tenant').notNull(),
    xname: text('xname').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenant, t.xname] }), uniqueIndex('tenant_xnames_xname_idx').on(t.xname)],
);

/** Locally issued API tokens (stored hashed). */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: text('id').primaryKey(),
    hash: text('hash').notNull(),
    role: text('role').notNull(),
    tenant: text('tenant'),
    subject: text('subject').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /**
     * Node tokens minted from a boot ticket (src/api/boot/exchange.ts): what the credential may do
     * (report, deploy, disk; src/auth/node-scopes.ts). Null: any node call (a provisioned token).
     */
    scope: text('scope'),
  },
  (t) => [
    uniqueIndex('api_tokens_hash_idx').on(t.hash),
    // A node's live credentials, found without reading its revoked ones (re-issuing revokes them first).
    index('api_tokens_live_node_idx').on(t.subject).where(sql`${t.role} = 'node' and ${t.revokedAt} is null`),
    // Node credentials minted from boot tickets, expired or revoked: what pruneBootGrants
    // (src/db/boot-grants.ts) deletes, found without reading the table.
    index('api_tokens_ticket_expiry_idx').on(t.expiresAt).where(sql`${t.role} = 'node' and ${t.scope} is not null`),
    index('api_tokens_ticket_revoked_idx')
      .on(t.revokedAt)
      .where(sql`${t.role} = 'node' and ${t.scope} is not null and ${t.revokedAt} is not null`),
    check('api_tokens_role_ck', sql`${t.role} in ('admin','operator','viewer','node')`),
    check('api_tokens_scope_ck', sql`${t.scope} is null or (${t.role} = 'node' and ${t.scope} in ('report','deploy','disk'))`),
  ],
);

/**
 * Rate limit buckets shared by every API replica (src/auth/shared-rate-limit.ts, queries in
 * src/db/rate-limits.ts): `tokens` as of `at`, refilled at `per_second` up to `burst`; negative is a
 * debt. UNLOGGED (see the migration): losing the windows in a crash only refills every bucket.
 */
export const rateLimits = pgTable('rate_limits', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  burst: doublePrecision('burst').notNull(),
  perSecond: doublePrecision('per_second').notNull(),
  at: ts('at').notNull(),
});

/**
 * The engine processes (worker, dev) that are alive: each beats every few seconds (src/engine/heartbeat.ts;
 * queries in src/db/engine-processes.ts), so the metrics can say, from any API replica, that no engine
 * runs at all. A process that stops cleanly deletes its row; a dead one's row ages out.
 */
export const engineProcesses = pgTable('engine_processes', {
  /** host:pid:random, unique per process start. */
  id: text('id').primaryKey(),
  role: text('role').notNull(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  startedAt: ts('started_at').notNull().defaultNow(),
  beatAt: ts('beat_at').notNull().defaultNow(),
});

/** A node's power drift: what bootorch left it at, what it was read as, and since when (ISO time). */
export interface PowerDriftMark {
  expected: 'on' | 'off';
  actual: 'on' | 'off';
  since: string;
}

export type ComponentRow = typeof components.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;
export type TemplateRow = typeof sessionTemplates.$inferSelect;
export type EventRow = typeof componentEvents.$inferSelect;
