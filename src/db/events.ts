/**
 * The append-only component timeline. Writes are batched: one INSERT ... SELECT FROM unnest for any
 * number of events, and a NOTIFY so subscribers on every API replica read the new rows.
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

const INSERT = `
  insert into component_events (component_id, session, session_tenant, kind, actor, from_phase, to_phase,
    from_status, to_status, action, error, reason, data)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::jsonb[])`;

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
    to_phase, from_status, to_status, action, error, reason, data) select * from unnest(${args})`);
  await db.execute(sql.raw(`select pg_notify('${EVENTS_CHANNEL}', '')`));
}
