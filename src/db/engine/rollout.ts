/**
 * Rollout gate SQL: per running session with gated nodes, how many are in flight, waiting, failed,
 * and how its canary went; admission flips `queued` nodes (FIFO by queued_seq) to active.
 */
import type { Queryable } from '../queryable.ts';
import { appendEventsRaw, notifySessionChanged } from '../events.ts';

export interface GateState {
  tenantKey: string;
  name: string;
  rollout: Record<string, unknown> | null;
  managed: number;
  queued: number;
  inFlight: number;
  failed: number;
  canaryDone: number;
  canaryFailed: number;
  paused: boolean;
}

/** Running sessions that have a rollout policy (gated or with a failure budget). */
export async function gateStates(q: Queryable): Promise<GateState[]> {
  const r = await q.query(`
    select s.tenant_key, s.name, s.rollout, s.paused,
      count(c.id)::int as managed,
      count(c.id) filter (where c.enabled and c.status = 'queued')::int as queued,
      count(c.id) filter (where c.enabled and c.status <> 'queued')::int as in_flight,
      count(c.id) filter (where c.status = 'failed')::int as failed,
      count(c.id) filter (where c.queued_seq <= coalesce((s.rollout->>'canary')::int, 0) and not c.enabled
        and c.status <> 'failed')::int as canary_done,
      count(c.id) filter (where c.queued_seq <= coalesce((s.rollout->>'canary')::int, 0) and c.status = 'failed')::int as canary_failed
    from sessions s join components c on c.session = s.name and c.session_tenant = s.tenant_key
    where s.status = 'running' and s.rollout is not null and not s.aborted
    group by s.tenant_key, s.name, s.rollout, s.paused`);
  return r.rows.map((x: any) => ({
    tenantKey: x.tenant_key, name: x.name, rollout: x.rollout, managed: x.managed, queued: x.queued, inFlight: x.in_flight,
    failed: x.failed, canaryDone: x.canary_done, canaryFailed: x.canary_failed, paused: x.paused,
  }));
}

/** Admit up to `n` queued nodes of the session, lowest queued_seq first. */
export async function admit(q: Queryable, tenantKey: string, name: string, n: number, actor: string): Promise<string[]> {
  if (n <= 0) return [];
  const r = await q.query(`
    update components c set status_override = 'on_hold', updated_at = now()
    where c.id in (select id from components where session = $1 and session_tenant = $2 and enabled
                   and status_override = 'queued' order by queued_seq, id limit $3 for update skip locked)
    returning c.id, c.queued_seq`, [name, tenantKey, n]);
  const ids = r.rows.sort((a: any, b: any) => Number(a.queued_seq) - Number(b.queued_seq)).map((x: any) => x.id as string);
  await appendEventsRaw(q, ids.map((id) => ({
    componentId: id, session: name, sessionTenant: tenantKey, kind: 'rollout' as const, actor,
    fromStatus: 'queued', toStatus: 'on_hold', reason: null, data: { admitted: true },
  })));
  return ids;
}

export async function pauseSession(q: Queryable, tenantKey: string, name: string, reason: string): Promise<boolean> {
  const r = await q.query(`update sessions set paused = true, pause_reason = $3
    where tenant_key = $1 and name = $2 and not paused and status = 'running'`, [tenantKey, name, reason]);
  if (r.rowCount) await notifySessionChanged(q, tenantKey, name);
  return (r.rowCount ?? 0) > 0;
}

/** Power-on calls made for a session's nodes in the last `seconds` (from the event log). */
export async function recentPowerOns(q: Queryable, tenantKey: string, session: string, seconds: number): Promise<number> {
  const r = await q.query(`select count(*)::int as n from component_events where session = $1 and session_tenant = $2
    and kind = 'action' and action = 'powering_on' and at > now() - make_interval(secs => $3)`, [session, tenantKey, seconds]);
  return r.rows[0].n;
}
