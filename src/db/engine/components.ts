/**
 * Set-based SQL the operators use on components. Every function takes any number of components and
 * issues a constant number of statements (arrays through unnest), never one round trip per node.
 * Writes that follow a read carry the row version (`xmin`) they read, so a decision made on a row
 * that changed meanwhile (a new session took the node, the reporter reported) is dropped, and the
 * next tick decides again from the new level.
 */
import type { Queryable } from '../queryable.ts';
import type { DecisionInput } from '../../domain/status-decision.ts';
import { appendEventsRaw, type NewEvent } from '../events.ts';

/** A component as the operators see it: what the status decision reads, plus what acting needs. */
export interface EngineComponent extends DecisionInput {
  id: string;
  /** The row version read (xmin); writes that follow a read are guarded by it. */
  version: string;
  enabled: boolean;
  statusOverride: string;
  actualUpdatedAt: Date | null;
  powerOnAttempts: number;
  powerOffGracefulAttempts: number;
  powerOffForcefulAttempts: number;
  session: string;
  sessionTenant: string;
  retryPolicy: number | null;
  /** The owning session's rollout policy (escalation overrides), null when none. */
  policy: Record<string, unknown> | null;
}

const COLUMNS = `c.id, c.xmin::text as version, c.enabled, c.phase, c.status, c.status_override, c.last_action,
  c.last_action_failed, c.last_action_at, c.desired_kernel, c.desired_kernel_parameters, c.desired_initrd,
  c.desired_configuration, c.actual_kernel, c.actual_kernel_parameters, c.actual_initrd, c.actual_updated_at,
  c.power_on_attempts, c.power_off_graceful_attempts, c.power_off_forceful_attempts, c.error, c.failure_reason,
  c.session, c.session_tenant, c.retry_policy, s.rollout as policy`;
/** The owning session's policy comes with the row (escalation overrides, waves). */
const FROM = `components c left join sessions s on s.name = c.session and s.tenant_key = c.session_tenant and c.session <> ''`;

function toComponent(r: any): EngineComponent {
  return {
    id: r.id, version: r.version, enabled: r.enabled, phase: r.phase, status: r.status, statusOverride: r.status_override,
    lastAction: r.last_action, lastActionFailed: r.last_action_failed, lastActionAt: r.last_action_at,
    desiredKernel: r.desired_kernel, desiredKernelParameters: r.desired_kernel_parameters, desiredInitrd: r.desired_initrd,
    desiredConfiguration: r.desired_configuration, actualKernel: r.actual_kernel,
    actualKernelParameters: r.actual_kernel_parameters, actualInitrd: r.actual_initrd, actualUpdatedAt: r.actual_updated_at,
    powerOnAttempts: r.power_on_attempts, powerOffGracefulAttempts: r.power_off_graceful_attempts,
    powerOffForcefulAttempts: r.power_off_forceful_attempts, error: r.error, failureReason: r.failure_reason,
    session: r.session, sessionTenant: r.session_tenant, retryPolicy: r.retry_policy, policy: r.policy ?? null,
  };
}

export interface ComponentSelection {
  /** Only enabled components (every operator but actual-state-cleanup). */
  enabled?: boolean;
  /** Computed statuses to select. */
  statuses?: string[];
  /** Computed statuses to leave out. */
  excludeStatuses?: string[];
  /** last_action_at older than this (or null). */
  lastActionBefore?: Date;
  /** Only these ids. */
  ids?: string[];
  /** Only components of this session. */
  session?: { tenantKey: string; name: string };
  /** Leave out components of paused or aborted sessions (action operators start nothing for them). */
  excludePausedSessions?: boolean;
  /** Actual boot state set and older than this. */
  actualOlderThan?: Date;
  /** Keyset paging: ids after this one, at most `limit` rows. */
  afterId?: string;
  limit?: number;
}

/** Select components in id order (the order chunks are acted on, so chunks are stable across ticks). */
export async function selectComponents(q: Queryable, s: ComponentSelection): Promise<EngineComponent[]> {
  const where: string[] = [];
  const values: unknown[] = [];
  const p = (v: unknown) => { values.push(v); return `$${values.length}`; };
  if (s.enabled !== undefined) where.push(s.enabled ? 'c.enabled' : 'not c.enabled');
  if (s.statuses) where.push(`c.status = any(${p(s.statuses)}::text[])`);
  if (s.excludeStatuses) where.push(`c.status <> all(${p(s.excludeStatuses)}::text[])`);
  if (s.lastActionBefore) where.push(`(c.last_action_at is null or c.last_action_at < ${p(s.lastActionBefore)})`);
  if (s.ids) where.push(`c.id = any(${p(s.ids)}::text[])`);
  if (s.session) where.push(`c.session = ${p(s.session.name)} and c.session_tenant = ${p(s.session.tenantKey)}`);
  if (s.actualOlderThan) {
    where.push(`(c.actual_kernel <> '' or c.actual_initrd <> '' or c.actual_kernel_parameters <> '')`);
    where.push(`(c.actual_updated_at is null or c.actual_updated_at < ${p(s.actualOlderThan)})`);
  }
  if (s.excludePausedSessions) {
    where.push('not coalesce(s.paused or s.aborted, false)');
  }
  if (s.afterId !== undefined) where.push(`c.id > ${p(s.afterId)}`);
  const limit = s.limit && s.limit > 0 ? ` limit ${p(s.limit)}` : '';
  const r = await q.query(`select ${COLUMNS} from ${FROM} ${where.length ? `where ${where.join(' and ')}` : ''} order by c.id${limit}`, values);
  return r.rows.map(toComponent);
}

/**
 * The selection a page at a time (max_component_batch_size rows, keyset on id), so an operator holds
 * one chunk in memory however large the machine. 0 = everything in one page.
 */
export async function* selectPages(q: Queryable, s: ComponentSelection, size: number): AsyncGenerator<EngineComponent[]> {
  let afterId: string | undefined;
  for (;;) {
    const page = await selectComponents(q, { ...s, afterId, limit: size > 0 ? size : undefined });
    if (page.length === 0) return;
    yield page;
    if (size <= 0 || page.length < size) return;
    afterId = page[page.length - 1]!.id;
  }
}

/**
 * Record an action before its side effect (BOS's preset of last_action, CASMCMS-8609): stamp the
 * action, clear the error, count the attempt. A crash after this can never hide a power call.
 * Returns the ids actually updated (a component whose row changed since it was read is skipped).
 */
export async function recordAction(
  q: Queryable, rows: EngineComponent[], action: string, counter: string | null, actor: string,
): Promise<EngineComponent[]> {
  if (rows.length === 0) return [];
  const counterSet = counter ? `, ${counter} = c.${counter} + 1` : '';
  const r = await q.query(
    `update components c set last_action = $1, last_action_failed = false, last_action_at = now(), error = '',
       updated_at = now() ${counterSet}
     from unnest($2::text[], $3::text[]) as u(id, version)
     where c.id = u.id and c.xmin::text = u.version and c.enabled
     returning c.id, c.xmin::text as version, c.status`,
    [action, rows.map((x) => x.id), rows.map((x) => x.version)],
  );
  const updated = new Map(r.rows.map((x: any) => [x.id as string, x.version as string]));
  // The status the action leads to (e.g. power_off_gracefully_called), so each node's log is one unbroken chain.
  const statusAfter = new Map(r.rows.map((x: any) => [x.id as string, x.status as string]));
  const kept = rows.filter((x) => updated.has(x.id)).map((x) => ({ ...x, version: updated.get(x.id)!, lastAction: action }));
  await appendEventsRaw(q, kept.map((x): NewEvent => ({
    componentId: x.id, session: x.session, sessionTenant: x.sessionTenant, kind: 'action', actor, action,
    fromPhase: x.phase, toPhase: x.phase, fromStatus: x.status, toStatus: statusAfter.get(x.id),
    data: counter ? { attempt: attemptsOf(x, counter) + 1 } : null,
  })));
  return kept;
}

function attemptsOf(x: EngineComponent, counter: string): number {
  if (counter === 'power_on_attempts') return x.powerOnAttempts;
  if (counter === 'power_off_graceful_attempts') return x.powerOffGracefulAttempts;
  return x.powerOffForcefulAttempts;
}

export interface ComponentProblem {
  id: string;
  error: string;
  /** Closed failure reason (domain/failures.ts). */
  reason: string;
}

/** Errors as data: write each component's error and classified reason (no state change). */
export async function recordProblems(q: Queryable, rows: EngineComponent[], problems: ComponentProblem[], actor: string): Promise<void> {
  if (problems.length === 0) return;
  await q.query(
    `update components c set error = u.error, failure_reason = u.reason, updated_at = now()
     from unnest($1::text[], $2::text[], $3::text[]) as u(id, error, reason) where c.id = u.id`,
    [problems.map((p) => p.id), problems.map((p) => p.error), problems.map((p) => p.reason)],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  await appendEventsRaw(q, problems.map((p): NewEvent => ({
    componentId: p.id, session: byId.get(p.id)?.session ?? '', sessionTenant: byId.get(p.id)?.sessionTenant ?? '',
    kind: 'error', actor, error: p.error, reason: p.reason,
  })));
}

/**
 * Mark components failed (retry limit reached, or a terminal problem): status_override 'failed',
 * the error kept or set, the reason recorded. The status operator disables them on its next pass.
 */
export async function failComponents(q: Queryable, rows: EngineComponent[], problems: ComponentProblem[], actor: string): Promise<void> {
  if (problems.length === 0) return;
  const byId = new Map(rows.map((r) => [r.id, r]));
  await q.query(
    `update components c set status_override = 'failed', error = u.error, failure_reason = u.reason, updated_at = now()
     from unnest($1::text[], $2::text[], $3::text[]) as u(id, error, reason) where c.id = u.id`,
    [problems.map((p) => p.id), problems.map((p) => p.error), problems.map((p) => p.reason)],
  );
  await appendEventsRaw(q, problems.map((p): NewEvent => {
    const r = byId.get(p.id);
    return {
      componentId: p.id, session: r?.session ?? '', sessionTenant: r?.sessionTenant ?? '', kind: 'failed', actor,
      fromPhase: r?.phase, toPhase: r?.phase, fromStatus: r?.status, toStatus: 'failed', error: p.error, reason: p.reason,
    };
  }));
}

/** Power-on: the token BSS returned for these components' boot parameters. */
export async function setDesiredBssToken(q: Queryable, ids: string[], token: string): Promise<void> {
  if (ids.length === 0) return;
  await q.query(`update components c set desired_bss_token = $1, updated_at = now() from unnest($2::text[]) as u(id)
    where c.id = u.id`, [token, ids]);
}

/** Power-on: the token -> artifacts record the reporter's token is later mapped through. */
export async function recordBootArtifacts(
  q: Queryable, token: string, a: { kernel: string; kernelParameters: string; initrd: string },
): Promise<void> {
  await q.query(
    `insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ($1, $2, $3, $4)
     on conflict (token) do nothing`,
    [token, a.kernel, a.kernelParameters, a.initrd],
  );
}

/** Discovery: a disabled component for every inventory node bootorch does not know yet. */
export async function insertDiscovered(q: Queryable, ids: string[], actor: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const r = await q.query(
    `insert into components (id, enabled, last_action, last_action_at)
     select id, false, 'newly_discovered', now() from unnest($1::text[]) as u(id)
     on conflict (id) do nothing returning id`,
    [ids],
  );
  const added = r.rows.map((x: any) => x.id as string);
  await appendEventsRaw(q, added.map((id): NewEvent => ({ componentId: id, kind: 'action', actor, action: 'newly_discovered' })));
  return added;
}

/** Actual-state cleanup: forget what stale nodes claimed they booted. */
export async function clearActualState(q: Queryable, rows: EngineComponent[], actor: string): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `update components c set actual_kernel = '', actual_kernel_parameters = '', actual_initrd = '', actual_bss_token = '',
       actual_updated_at = now(), last_action = 'actual_state_cleanup', last_action_failed = false,
       last_action_at = now(), updated_at = now()
     from unnest($1::text[], $2::text[]) as u(id, version) where c.id = u.id and c.xmin::text = u.version`,
    [rows.map((r) => r.id), rows.map((r) => r.version)],
  );
  await appendEventsRaw(q, rows.map((r): NewEvent => ({
    componentId: r.id, session: r.session, sessionTenant: r.sessionTenant, kind: 'action', actor, action: 'actual_state_cleanup',
  })));
}
