/**
 * SQL of the live feed (src/api/live/): read the event log after a cursor, see which transactions
 * were in flight when it was read, and open the one LISTEN connection a process needs.
 */
import type pg from 'pg';
import { sql, type SQL } from 'drizzle-orm';
import { sessionClient, type Db } from './client.ts';
import { visibleTo } from './tenants.ts';

/**
 * The live feed reads on the pool or on its own connection with plain pg (one snapshot per
 * statement matters here; src/api/live/feed.ts); every other module takes a `Db`.
 */
type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.Client, 'query'>;

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

/** A component_events row as pg returns it (the id is a bigint, so text). */
type EventDbRow = {
  id: string;
  at: Date | string;
  component_id: string;
  session: string;
  session_tenant: string;
  kind: string;
  actor: string;
  from_phase: string | null;
  to_phase: string | null;
  from_status: string | null;
  to_status: string | null;
  action: string | null;
  error: string | null;
  reason: string | null;
};

const toEvent = (x: EventDbRow): LiveEvent => ({
  // pg parses timestamptz into a Date; drizzle's execute leaves it text.
  id: Number(x.id),
  at: new Date(x.at),
  componentId: x.component_id,
  session: x.session,
  sessionTenant: x.session_tenant,
  kind: x.kind,
  actor: x.actor,
  fromPhase: x.from_phase,
  toPhase: x.to_phase,
  fromStatus: x.from_status,
  toStatus: x.to_status,
  action: x.action,
  error: x.error,
  reason: x.reason,
});

/**
 * True in the statement's snapshot when none of these transactions is still in flight. Asked of the
 * same snapshot the rows are read with, never of pg_xact_status(): that says "committed" as soon as
 * the commit is in the commit log, a moment before the transaction leaves the snapshots, so a row read
 * right after could still be invisible.
 */
const ALL_ENDED = (param: string) =>
  `coalesce((select bool_and(pg_visible_in_snapshot(x::xid8, pg_current_snapshot())) from unnest(${param}::text[]) x), true)`;

export interface FeedRead {
  events: LiveEvent[];
  /** Whether every transaction in `waitingOn` had ended in the snapshot the rows were read with. */
  ended: boolean;
}

/**
 * Events after `after`, oldest first, and whether the transactions a hole waits on have ended (one
 * statement, one snapshot: if they have, whatever they committed is among the rows).
 */
export async function readFeed(q: Queryable, after: number, limit: number, waitingOn: string[] = []): Promise<FeedRead> {
  const r = await q.query(
    `select s.ended, e.* from (select ${ALL_ENDED('$3')} as ended) s
    left join lateral (select ${COLUMNS} from component_events where id > $1 order by id limit $2) e on true`,
    [after, limit, waitingOn],
  );
  const rows = r.rows as Array<EventDbRow & { ended: boolean }>;
  return { events: rows.filter((x) => x.id !== null).map(toEvent), ended: rows[0]?.ended ?? true };
}

/** The newest event id. */
export async function maxEventId(q: Queryable): Promise<number> {
  const r = await q.query('select coalesce(max(id), 0) as max_id from component_events');
  return Number(r.rows[0].max_id);
}

/**
 * The transactions that may still hold an event id drawn before this call: every writer takes its
 * transaction id before its event ids (events.ts), so they are among the transactions with a smaller
 * id than a fresh one, B, taken here and committed. A snapshot taken after B lists every such
 * transaction still in flight (its xmax is past B). Transactions of sessions connected to other
 * databases are left out (xids are cluster-wide; a long transaction elsewhere must not hold our events
 * back); only what is known to be elsewhere is left out, so the answer errs on the side of waiting.
 * Two statements, in this order; costs one transaction id, taken only when ids arrive out of order.
 */
export async function inFlightBefore(q: Queryable): Promise<string[]> {
  const b = (await q.query('select pg_current_xact_id()::text as b')).rows[0].b as string;
  const r = await q.query(
    `select array(select x::text from pg_snapshot_xip(pg_current_snapshot()) x
    where x < $1::xid8 and x::xid not in (select a.backend_xid from pg_stat_activity a
      where a.backend_xid is not null and a.datname <> current_database())) as xids`,
    [b],
  );
  return r.rows[0].xids;
}

/** Whether none of these transactions is in flight any more (as a new snapshot sees it). */
export async function allEnded(q: Queryable, xids: string[]): Promise<boolean> {
  if (xids.length === 0) return true;
  const r = await q.query(`select ${ALL_ENDED('$1')} as ended`, [xids]);
  return r.rows[0].ended;
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
export async function readEventsPage(db: Db, f: EventFilter, after: number, upTo: number, limit: number): Promise<LiveEvent[]> {
  const where: SQL[] = [sql`id > ${after}`, sql`id <= ${upTo}`];
  if (f.ids) where.push(sql`component_id = any(${sql.param(f.ids)}::text[])`);
  if (f.session != null) where.push(sql`session = ${f.session} and session_tenant = ${f.sessionTenant ?? ''}`);
  if (f.phase != null) where.push(sql`(from_phase = ${f.phase} or to_phase = ${f.phase})`);
  if (f.status != null) where.push(sql`(from_status = ${f.status} or to_status = ${f.status})`);
  if (f.kinds) where.push(sql`kind = any(${sql.param(f.kinds)}::text[])`);
  if (f.tenant != null) where.push(visibleTo(f.tenant, sql.raw('component_id')));
  const r = await db.execute<EventDbRow>(sql`select ${sql.raw(COLUMNS)} from component_events where ${sql.join(where, sql` and `)}
    order by id limit ${limit}`);
  return r.rows.map(toEvent);
}

/** A dedicated connection for LISTEN (never a pool client: a pool would hand it to others). */
export async function listenConnection(config: pg.ClientConfig, channels: string[]): Promise<pg.Client> {
  const client = sessionClient({ ...config, application_name: 'bootorch-live' });
  try {
    await client.connect();
    for (const ch of channels) await client.query(`listen ${ch}`);
  } catch (e) {
    await client.end().catch(() => {});
    throw e;
  }
  return client;
}
