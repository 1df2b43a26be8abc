/**
 * The append-only component timeline. Writes are batched: one INSERT ... SELECT FROM unnest for any
 * number of events, and a NOTIFY so subscribers on every API replica read the new rows.
 *
 * Ids come from a sequence, so a transaction can commit a lower id after another has committed a
 * higher one. Readers of the live feed (src/api/live/feed.ts) hold back events behind such a hole until
 * every transaction in flight when they saw it has ended; for that to be sound, the writer must have
 * its transaction id before it draws an event id: the INSERT's `pg_current_xact_id()` filter
 * (stable, so evaluated once, before the first row's nextval) makes sure of it.
 */
import { sql } from 'drizzle-orm';
import type { Database } from './client.ts';
import type { Queryable } from './queryable.ts';

export interface NewEvent {
  componentId: string;
  session?: string;
  sessionTenant?: string;
  kind: 'transition' | 'action' | 'error' | 'report' | 'setup' | 'manual' | 'failed' | 'rollout' | 'stage';
  actor: string;
  fromPhase?: string | null;
  toPhase?: string | null;
  fromStatus?: string | null;
  toStatus?: string | null;
  action?: string | null;
  error?: string | null;
  reason?: string | null;
  data?: Record<string, unknown> | null;
}

export const EVENTS_CHANNEL = 'bootorch_events';
/** Payload: JSON `[tenantKey, name]` of a session whose row changed (status, pause). */
export const SESSIONS_CHANNEL = 'bootorch_sessions';

/** Tell live subscribers (sessionProgress) that a session changed; delivered at COMMIT. */
export async function notifySessionChanged(q: Queryable, tenantKey: string, name: string): Promise<void> {
  await q.query('select pg_notify($1, $2)', [SESSIONS_CHANNEL, JSON.stringify([tenantKey, name])]);
}

const INSERT = `
  insert into component_events (component_id, session, session_tenant, kind, actor, from_phase, to_phase,
    from_status, to_status, action, error, reason, data)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::jsonb[])
  where pg_current_xact_id() is not null`;

function columns(events: NewEvent[]): unknown[][] {
  const col = (f: (e: NewEvent) => unknown) => events.map(f);
  return [
    col((e) => e.componentId), col((e) => e.session ?? ''), col((e) => e.sessionTenant ?? ''), col((e) => e.kind),
    col((e) => e.actor), col((e) => e.fromPhase ?? null), col((e) => e.toPhase ?? null), col((e) => e.fromStatus ?? null),
    col((e) => e.toStatus ?? null), col((e) => e.action ?? null), col((e) => e.error ?? null), col((e) => e.reason ?? null),
    col((e) => (e.data ? JSON.stringify(e.data) : null)),
  ];
}

/** Append with a pg Pool / PoolClient (the engine's path). */
export async function appendEventsRaw(q: Queryable, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await q.query(INSERT, columns(events));
  // Delivered at COMMIT (never for a rolled-back write); subscribers read the log from their cursor.
  await q.query(`select pg_notify('${EVENTS_CHANNEL}', '')`);
}

/** Append with drizzle (a database or a transaction). */
export async function appendEvents(db: Database, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const c = columns(events).map((v) => sql.param(v));
  const t = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'jsonb'];
  const args = sql.join(c.map((p, i) => sql`${p}::${sql.raw(t[i]!)}[]`), sql`, `);
  await db.execute(sql`insert into component_events (component_id, session, session_tenant, kind, actor, from_phase,
    to_phase, from_status, to_status, action, error, reason, data) select * from unnest(${args})
    where pg_current_xact_id() is not null`);
  await db.execute(sql.raw(`select pg_notify('${EVENTS_CHANNEL}', '')`));
}
