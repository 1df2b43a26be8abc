/**
 * SQL of the live feed (src/api/live/): read the event log after a cursor, see which transactions
 * were in flight when it was read, and open the one LISTEN connection a process needs.
 */
import pg from 'pg';
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from './client.ts';
import type { Queryable } from './queryable.ts';
import { visibleTo } from './queries/tenants.ts';

/** One component event as subscribers see it (the `data` column stays in the log). */
export interface LiveEvent {
  /** The log id: the cursor. */
  id: number;
  at: Date;
  componentId: string;
  session: string;
  sessionTenant: string;
  kind: string;
  actor: string;
  fromPhase: string | null;
  toPhase: string | null;
  fromStatus: string | null;
  toStatus: string | null;
  action: string | null;
  error: string | null;
  reason: string | null;
}

const COLUMNS = `id, at, component_id, session, session_tenant, kind, actor, from_phase, to_phase, from_status,
  to_status, action, error, reason`;

const toEvent = (x: any): LiveEvent => ({
  id: Number(x.id), at: x.at, componentId: x.component_id, session: x.session, sessionTenant: x.session_tenant,
  kind: x.kind, actor: x.actor, fromPhase: x.from_phase, toPhase: x.to_phase, fromStatus: x.from_status,
  toStatus: x.to_status, action: x.action, error: x.error, reason: x.reason,
});

/** The in-progress transaction ids of a `pg_current_snapshot()` text (`xmin:xmax:xip,...`). */
const inFlightOf = (snap: string): string[] => (snap.split(':')[2] ?? '').split(',').filter(Boolean);

export interface FeedRead {
  events: LiveEvent[];
  /** Top-level transactions in flight when the rows were read (the statement's snapshot). */
  inFlight: string[];
}

/**
 * Events after `after`, oldest first, and the transactions in flight at the same instant (one
 * statement, one snapshot). An id missing below the newest row belongs to one of those transactions,
 * or to one that rolled back.
 */
export async function readFeed(q: Queryable, after: number, limit: number): Promise<FeedRead> {
  const r = await q.query(`select s.snap, e.* from (select pg_current_snapshot()::text as snap) s
    left join lateral (select ${COLUMNS} from component_events where id > $1 order by id limit $2) e on true`, [after, limit]);
  return { events: r.rows.filter((x: any) => x.id !== null).map(toEvent), inFlight: inFlightOf(String(r.rows[0]?.snap ?? '')) };
}

/** Newest event id and the transactions in flight (where a new feed starts). */
export async function feedStart(q: Queryable): Promise<{ maxId: number; inFlight: string[] }> {
  const r = await q.query(`select coalesce((select max(id) from component_events), 0) as max_id,
    pg_current_snapshot()::text as snap`);
  return { maxId: Number(r.rows[0].max_id), inFlight: inFlightOf(String(r.rows[0].snap)) };
}

/** How many of these transactions are still running. */
export async function countRunning(q: Queryable, xids: string[]): Promise<number> {
  if (xids.length === 0) return 0;
  const r = await q.query(`select count(*)::int as n from unnest($1::text[]::xid8[]) x
    where pg_xact_status(x) = 'in progress'`, [xids]);
  return r.rows[0].n;
}

/** What a subscriber asked for, in stored spellings; every given field must match. */
export interface EventFilter {
  ids?: string[] | null;
  session?: string | null;
  /** Tenant key of the session (sessions are namespaced by tenant); used with `session`. */
  sessionTenant?: string;
  /** Matches an event whose from or to phase is this. */
  phase?: string | null;
  /** Matches an event whose from or to status is this. */
  status?: string | null;
  kinds?: string[] | null;
  /** Only this tenant's xnames (null: every component). */
  tenant?: string | null;
}

/**
 * A page of the log for one subscriber: matching events with after < id <= upTo, oldest first.
 * upTo is the feed's settled mark, so nothing read here can still change.
 */
export async function readEventsPage(db: Database, f: EventFilter, after: number, upTo: number, limit: number): Promise<LiveEvent[]> {
  const where: SQL[] = [sql`id > ${after}`, sql`id <= ${upTo}`];
  if (f.ids) where.push(sql`component_id = any(${sql.param(f.ids)}::text[])`);
  if (f.session != null) where.push(sql`session = ${f.session} and session_tenant = ${f.sessionTenant ?? ''}`);
  if (f.phase != null) where.push(sql`(from_phase = ${f.phase} or to_phase = ${f.phase})`);
  if (f.status != null) where.push(sql`(from_status = ${f.status} or to_status = ${f.status})`);
  if (f.kinds) where.push(sql`kind = any(${sql.param(f.kinds)}::text[])`);
  if (f.tenant != null) where.push(visibleTo(f.tenant, sql.raw('component_id')));
  const r = await db.execute(sql`select ${sql.raw(COLUMNS)} from component_events where ${sql.join(where, sql` and `)}
    order by id limit ${limit}`);
  return r.rows.map(toEvent);
}

/** The xnames a tenant owns, for filtering live events in memory. */
export async function tenantXnameSet(q: Queryable, tenant: string): Promise<Set<string>> {
  const r = await q.query('select xname from tenant_xnames where tenant = $1', [tenant]);
  return new Set(r.rows.map((x: any) => x.xname as string));
}

/** A dedicated connection for LISTEN (never a pool client: a pool would hand it to others). */
export async function listenConnection(config: pg.ClientConfig, channels: string[]): Promise<pg.Client> {
  const client = new pg.Client({ ...config, application_name: 'bootorch-live' });
  await client.connect();
  for (const ch of channels) await client.query(`listen ${ch}`);
  return client;
}
