/**
 * The append-only component timeline. Writes are batched: one INSERT ... SELECT for any number of
 * events, with a NOTIFY in the same statement so subscribers on every API replica read the new rows.
 *
 * Ids come from a sequence, so a transaction can commit a lower id after another has committed a
 * higher one. Readers of the live feed (src/api/live/feed.ts) hold back events behind such a hole until
 * every transaction in flight when they saw it has ended; for that to be sound, the writer must have
 * its transaction id before it draws an event id: the INSERT's `pg_current_xact_id()` filter
 * (stable, so evaluated once, before the first row's nextval) makes sure of it.
 */
import { desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client.ts';
import { componentEvents, type EventRow } from './schema.ts';

export interface NewEvent {
  componentId: string;
  session?: string;
  sessionTenant?: string;
  kind: 'transition' | 'action' | 'error' | 'report' | 'setup' | 'manual' | 'failed' | 'rollout' | 'stage' | 'drift' | 'quarantine';
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
const COLUMNS = `component_id, session, session_tenant, kind, actor, from_phase, to_phase, from_status, to_status, action,
    error, reason, data`;

/**
 * The one events write, as a part of a statement: the body of a CTE (`with ev as (...)`) inserting the
 * rows `source` selects (the 13 columns of NewEvent in COLUMNS order: component_id ... data jsonb).
 * Pair it with notifyEvents on the same CTE. A writer whose events come from its own write (reports)
 * puts both in that write's statement; appendEvents is the same with its rows from parameters.
 */
export function insertEvents(source: SQL): SQL {
  return sql`insert into component_events (${sql.raw(COLUMNS)}) select * from (${source}) e
    where pg_current_xact_id() is not null returning 1`;
}

/**
 * A scalar (for the statement's select list): NOTIFY when the CTE `cte` (an insertEvents) wrote a row.
 * Delivered at COMMIT (never for a rolled-back write); subscribers read the log from their cursor.
 */
export function notifyEvents(cte: string): SQL {
  return sql`(select pg_notify('${sql.raw(EVENTS_CHANNEL)}', '') from ${sql.raw(cte)} limit 1)`;
}

/** Append any number of events and NOTIFY, in one statement (INSERT ... SELECT FROM unnest). */
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
  await db.execute(sql`with ev as (${insertEvents(sql`select * from unnest(${args})`)}) select ${notifyEvents('ev')}`);
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
