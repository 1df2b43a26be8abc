/**
 * Session SQL for the session operators: pending sessions, applying a setup plan to components in
 * set-based statements, marking sessions running or complete.
 */
import type { Queryable } from '../queryable.ts';
import { appendEventsRaw, notifySessionChanged, type NewEvent } from '../events.ts';
import type { DesiredState } from '../../engine/plan.ts';

export interface EngineSession {
  tenantKey: string;
  name: string;
  tenant: string | null;
  operation: 'boot' | 'reboot' | 'shutdown';
  templateName: string;
  limit: string;
  stage: boolean;
  includeDisabled: boolean;
  startTime: Date;
  rollout: Record<string, unknown> | null;
}

export async function pendingSessions(q: Queryable): Promise<EngineSession[]> {
  const r = await q.query(`select tenant_key, name, tenant, operation, template_name, "limit", stage, include_disabled,
    start_time, rollout from sessions where status = 'pending' order by start_time, name`);
  return r.rows.map((x: any) => ({
    tenantKey: x.tenant_key, name: x.name, tenant: x.tenant, operation: x.operation, templateName: x.template_name,
    limit: x.limit, stage: x.stage, includeDisabled: x.include_disabled, startTime: x.start_time, rollout: x.rollout,
  }));
}

export async function loadTemplate(q: Queryable, tenantKey: string, name: string) {
  const r = await q.query(`select enable_cfs, cfs_configuration, boot_sets, rollout from session_templates
    where tenant_key = $1 and name = $2`, [tenantKey, name]);
  const x = r.rows[0];
  return x ? { enableCfs: x.enable_cfs as boolean, cfsConfiguration: x.cfs_configuration as string | null,
    bootSets: x.boot_sets as Record<string, unknown>, rollout: x.rollout as Record<string, unknown> | null } : null;
}

export async function existingComponents(q: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await q.query('select id from components where id = any($1::text[])', [ids]);
  return new Set(r.rows.map((x: any) => x.id as string));
}

export async function tenantXnames(q: Queryable, tenant: string): Promise<Set<string>> {
  const r = await q.query('select xname from tenant_xnames where tenant = $1', [tenant]);
  return new Set(r.rows.map((x: any) => x.xname as string));
}

export interface SetupRow {
  id: string;
  desired: DesiredState;
  /** FIFO position in a gated rollout, else null. */
  queuedSeq: number | null;
}

/**
 * Write desired (or staged) state for a session's nodes: one statement for all of them. Non-staged:
 * the node joins the session, is enabled and put on hold (or queued behind a rollout gate), its
 * counters reset and its last action `session_setup`; a reboot forgets the node's actual state.
 */
export async function applySetup(
  q: Queryable, s: EngineSession, rows: SetupRow[], opts: { retryPolicy: number | null }, actor: string,
): Promise<void> {
  if (rows.length === 0) return;
  const col = <T>(f: (r: SetupRow) => T) => rows.map(f);
  const args = [col((r) => r.id), col((r) => r.desired.kernel), col((r) => r.desired.kernelParameters),
    col((r) => r.desired.initrd), col((r) => r.desired.configuration), col((r) => r.queuedSeq)];
  if (s.stage) {
    await q.query(`update components c set staged_kernel = u.k, staged_kernel_parameters = u.p, staged_initrd = u.i,
        staged_configuration = u.cfg, staged_session = $7, staged_updated_at = now(), error = '', updated_at = now()
      from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) as u(id, k, p, i, cfg, seq)
      where c.id = u.id`, [...args, s.name]);
  } else {
    await q.query(`update components c set desired_kernel = u.k, desired_kernel_parameters = u.p, desired_initrd = u.i,
        desired_configuration = u.cfg, desired_bss_token = '', desired_updated_at = now(),
        session = $7, session_tenant = $8, enabled = true,
        status_override = case when u.seq is null then 'on_hold' else 'queued' end, queued_seq = u.seq,
        last_action = 'session_setup', last_action_failed = false, last_action_at = now(), error = '', failure_reason = '',
        power_on_attempts = 0, power_off_graceful_attempts = 0, power_off_forceful_attempts = 0,
        retry_policy = coalesce($10::int, c.retry_policy),
        actual_kernel = case when $9 then '' else actual_kernel end,
        actual_kernel_parameters = case when $9 then '' else actual_kernel_parameters end,
        actual_initrd = case when $9 then '' else actual_initrd end,
        actual_bss_token = case when $9 then '' else actual_bss_token end,
        updated_at = now()
      from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) as u(id, k, p, i, cfg, seq)
      where c.id = u.id`, [...args, s.name, s.tenantKey, s.operation === 'reboot', opts.retryPolicy]);
  }
  await appendEventsRaw(q, rows.map((r): NewEvent => ({
    componentId: r.id, session: s.name, sessionTenant: s.tenantKey, kind: s.stage ? 'stage' : 'setup', actor,
    action: s.stage ? null : 'session_setup', toStatus: s.stage ? null : (r.queuedSeq === null ? 'on_hold' : 'queued'),
    data: { operation: s.operation, kernel: r.desired.kernel, configuration: r.desired.configuration },
  })));
}

export async function markRunning(q: Queryable, s: EngineSession, ids: string[], rollout: Record<string, unknown> | null): Promise<void> {
  await q.query(`update sessions set status = 'running', components = $3, rollout = $4
    where tenant_key = $1 and name = $2 and status = 'pending'`, [s.tenantKey, s.name, ids.join(','), rollout ? JSON.stringify(rollout) : null]);
  await notifySessionChanged(q, s.tenantKey, s.name);
}

export async function markComplete(q: Queryable, tenantKey: string, name: string, error: string | null): Promise<boolean> {
  const r = await q.query(`update sessions set status = 'complete', end_time = now(), error = coalesce($3, error)
    where tenant_key = $1 and name = $2 and status <> 'complete'`, [tenantKey, name, error]);
  if (r.rowCount) await notifySessionChanged(q, tenantKey, name);
  return (r.rowCount ?? 0) > 0;
}

/** Running sessions with no enabled component and no staged component left (BOS session_completion). */
export async function finishedSessions(q: Queryable): Promise<Array<{ tenantKey: string; name: string }>> {
  const r = await q.query(`select s.tenant_key, s.name from sessions s where s.status = 'running'
    and not exists (select 1 from components c where c.session = s.name and c.session_tenant = s.tenant_key and c.enabled)
    and not exists (select 1 from components c where c.staged_session = s.name and c.staged_session <> '')`);
  return r.rows.map((x: any) => ({ tenantKey: x.tenant_key, name: x.name }));
}

/** Complete sessions that started before `before` (session_cleanup), with their snapshots. */
export async function deleteOldSessions(q: Queryable, before: Date): Promise<number> {
  const r = await q.query(`delete from sessions where status = 'complete' and start_time < $1 returning tenant_key, name`, [before]);
  if (r.rows.length === 0) return 0;
  await q.query(`delete from session_status_snapshots x using unnest($1::text[], $2::text[]) as u(t, n)
    where x.tenant_key = u.t and x.name = u.n`, [r.rows.map((x: any) => x.tenant_key), r.rows.map((x: any) => x.name)]);
  return r.rows.length;
}

export interface SessionInfo {
  name: string;
  tenantKey: string;
  status: string;
  paused: boolean;
  pauseReason: string | null;
  aborted: boolean;
  rollout: Record<string, unknown> | null;
}

export async function sessionInfo(q: Queryable, tenantKey: string, name: string): Promise<SessionInfo | null> {
  const r = await q.query(`select name, tenant_key, status, paused, pause_reason, aborted, rollout from sessions
    where tenant_key = $1 and name = $2`, [tenantKey, name]);
  const x = r.rows[0];
  return x ? { name: x.name, tenantKey: x.tenant_key, status: x.status, paused: x.paused, pauseReason: x.pause_reason,
    aborted: x.aborted, rollout: x.rollout } : null;
}

/** Resume a paused session; failures so far no longer count against its budget, a failed canary is accepted. */
export async function resumeSession(q: Queryable, tenantKey: string, name: string): Promise<boolean> {
  const r = await q.query(`update sessions s set paused = false, pause_reason = null,
      rollout = coalesce(s.rollout, '{}'::jsonb) || jsonb_build_object('_canaryAccepted', true, '_failedAtResume',
        (select count(*) from components c where c.session = s.name and c.session_tenant = s.tenant_key and c.status = 'failed'))
    where tenant_key = $1 and name = $2 and paused and status = 'running'`, [tenantKey, name]);
  if (r.rowCount) await notifySessionChanged(q, tenantKey, name);
  return (r.rowCount ?? 0) > 0;
}

/**
 * Abort: the session's nodes stay where they are, are disabled and marked failed with a clear error
 * (reason `aborted`); the session then completes. Returns the nodes stopped.
 */
export async function abortSession(q: Queryable, tenantKey: string, name: string, actor: string): Promise<string[] | null> {
  const s = await q.query(`update sessions set aborted = true, paused = false
    where tenant_key = $1 and name = $2 and status <> 'complete' returning name`, [tenantKey, name]);
  if (s.rowCount === 0) return null;
  await notifySessionChanged(q, tenantKey, name);
  const error = `Session ${name} aborted by ${actor}; the node was left where it was`;
  const r = await q.query(`update components set enabled = false, status_override = 'failed', error = $3,
      failure_reason = 'aborted', updated_at = now()
    where session = $1 and session_tenant = $2 and enabled returning id, phase`, [name, tenantKey, error]);
  await appendEventsRaw(q, r.rows.map((x: any): NewEvent => ({
    componentId: x.id, session: name, sessionTenant: tenantKey, kind: 'failed', actor, fromPhase: x.phase, toPhase: x.phase,
    toStatus: 'failed', error, reason: 'aborted',
  })));
  return r.rows.map((x: any) => x.id as string);
}
