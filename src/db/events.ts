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
import { desc, eq, sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { componentEvents, type EventRow } from './schema.ts';

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
export async function notifySessionChanged(db: Db, tenantKey: string, name: string): Promise<void> {
  await db.execute(sql`select pg_notify(${SESSIONS_CHANNEL}, ${JSON.stringify([tenantKey, name])})`);
}

const TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'jsonb'];

/** Append any number of events in one statement (INSERT ... SELECT FROM unnest), and NOTIFY. */
export async function appendEvents(db: Db, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const col = (f: (e: NewEvent) => unknown) => events.map(f);
  const columns = [
    col((e) => e.componentId),
    col((e) => e.session ?? ''),
    col((e) => e.sessionTenant ?? ''),
    col((e) => e.kind),
    col((e) => e.actor),
    col((e) => e.fromPhase ?? null),
    col((e) => e.toPhase ?? null),
    col((e) => e.fromStatus ?? null),
    col((e) => e.toStatus ?? null),
    col((e) => e.action ?? null),
    col((e) => e.error ?? null),
    col((e) => e.reason ?? null),
    col((e) => (e.data ? JSON.stringify(e.data) : null)),
  ];
  const args = sql.join(
    columns.map((v, i) => sql`${sql.param(v)}::${sql.raw(TYPES[i]!)}[]`),
    sql`, `,
  );
  await db.execute(sql`insert into component_events (component_id, session, session_tenant, kind, actor, from_phase,
    to_phase, from_status, to_status, action, error, reason, data) select * from unnest(${args})
    where pg_current_xact_id() is not null`);
  // Delivered at COMMIT (never for a rolled-back write); subscribers read the log from their cursor.
  await db.execute(sql.raw(`select pg_notify('${EVENTS_CHANNEL}', '')`));
}

/** A component's last `limit` events, oldest first (explain). */
export async function recentEvents(db: Db, componentId: string, limit: number): Promise<EventRow[]> {
  const rows = await db
    .select()
    .from(componentEvents)
    .where(eq(componentEvents.componentId, componentId))
    .orderBy(desc(componentEvents.id))
    .limit(limit);
  return rows.reverse();
}
