/**
 * Every statement bootorch runs against pg-boss's own tables, one function per statement with its
 * row type (graphile-worker's src/sql/ is the model). Nothing outside src/engine/queue/ reads or
 * writes them (test/unit/queue-home.test.ts greps for it). They are written for pg-boss's job table
 * at schema version EXPECTED_BOSS_SCHEMA (schema.ts checks it at start); an upgrade of pg-boss reads
 * this file, not the engine.
 *
 * Each takes a pg-boss `Db` (its `executeSql`): pg-boss's own pool (`boss.getDb()`), a transaction's
 * client (`bossDbOf(tx)`), or any connection that answers `executeSql`.
 */
import type PgBoss from 'pg-boss';
import type { Db } from '../../db/client.ts';
import { BOSS_SCHEMA } from './schema.ts';

const JOB = `${BOSS_SCHEMA}.job`;
const ARCHIVE = `${BOSS_SCHEMA}.archive`;

/** pg-boss's `db` handle over one of bootorch's: its statements run there (inside its transaction, if it is one). */
export function bossDbOf(db: Db): PgBoss.Db {
  return { executeSql: (text, values) => db.$client.query(text, values) };
}

async function rowsOf<T>(db: PgBoss.Db, text: string, values: unknown[]): Promise<T[]> {
  return (await db.executeSql(text, values)).rows as T[];
}

/** A job as fetchDueJobs takes it. */
export interface DueJobRow<T> {
  id: string;
  name: string;
  data: T;
  retry_count: number;
  created_on: Date;
  start_after: Date;
}

/**
 * Take up to `size` due jobs of `queue` and mark them active, in one statement. pg-boss 10's fetch
 * orders by priority and creation, which no index of its job table serves, so every fetch read and
 * sorted every waiting job of the queue (at 100,000 nodes: 9.6 ms a call on average, 16.7 s of one
 * reboot). The job queues have no priorities: this takes the jobs in `start_after` order, the order
 * of pg-boss's own index of waiting jobs (name, start_after), and stops at `size`. The rest is
 * pg-boss's fetch for a `short` queue: locked jobs are skipped, and a job started again counts a retry.
 */
export function fetchDueJobs<T>(db: PgBoss.Db, queue: string, size: number): Promise<DueJobRow<T>[]> {
  return rowsOf<DueJobRow<T>>(
    db,
    `with next as (
      select id from ${JOB} where name = $1 and state < 'active' and start_after < now()
      order by start_after limit $2 for update skip locked)
    update ${JOB} j set state = 'active', started_on = now(),
      retry_count = case when j.started_on is not null then j.retry_count + 1 else j.retry_count end
    from next where j.name = $1 and j.id = next.id
    returning j.id, j.name, j.data, j.retry_count, j.created_on, j.start_after`,
    [queue, size],
  );
}

/**
 * Complete active jobs by deleting them, in one statement. A completed action job has nothing left to
 * tell: what it did is on its component (its row and events), and pg-boss would only have archived it
 * and deleted it later. Kept as pg-boss's `complete` keeps it, each job left three row versions
 * (created, active, completed) in a partition no autovacuum reached within a reboot: at 100,000 nodes
 * a batch of 2,800 took 138 ms on average to complete, and every fetch and reaper pass read through
 * the dead rows. (pg-boss's own `complete` also matched the ids with `id in (select unnest($2))`, which
 * the planner ran as a nested loop over every active job of the queue: 368 ms a batch of 2,500.)
 */
export async function deleteActiveJobs(db: PgBoss.Db, queue: string, ids: string[]): Promise<void> {
  await db.executeSql(`delete from ${JOB} where name = $1 and id = any($2::uuid[]) and state = 'active'`, [queue, ids]);
}

/**
 * Cap the backoff of jobs pg-boss has just failed into `retry`: each starts no later than its data's
 * `retryMaxDelay` seconds from now (`defaultMaxSeconds` for jobs whose data carries none). pg-boss 10
 * doubles without a ceiling (its 5th retry waits 16 to 32 s, its 7th over a minute).
 */
export async function capRetryStart(db: PgBoss.Db, queue: string, ids: string[], defaultMaxSeconds: number): Promise<void> {
  await db.executeSql(
    `update ${JOB}
    set start_after = least(start_after, now() + make_interval(secs => coalesce((data->>'retryMaxDelay')::int, $3)))
    where name = $1 and id = any($2::uuid[]) and state = 'retry'`,
    [queue, ids, defaultMaxSeconds],
  );
}

/** Whether `queue` has an active job other than `exceptIds` (another process's tick of a stately queue). */
export async function otherActiveJobExists(db: PgBoss.Db, queue: string, exceptIds: string[]): Promise<boolean> {
  const [r] = await rowsOf<{ found: boolean }>(
    db,
    `select exists (select 1 from ${JOB} where name = $1 and state = 'active' and id <> all($2::uuid[])) as found`,
    [queue, exceptIds],
  );
  return r?.found ?? false;
}

/**
 * Active jobs of the queues named `prefix%`, started over `graceSeconds` ago, whose session advisory
 * lock (`leaseSpace`, hashtext(id)) nobody holds: the lease reaper's suspects (engine/leases.ts).
 */
export function unleasedActiveJobs(
  db: PgBoss.Db,
  prefix: string,
  graceSeconds: number,
  leaseSpace: number,
): Promise<Array<{ name: string; id: string }>> {
  return rowsOf(
    db,
    `select j.name, j.id::text as id from ${JOB} j
    where j.state = 'active' and j.name like $1 and j.started_on < now() - make_interval(secs => $2)
      and not exists (select 1 from pg_locks l where l.locktype = 'advisory' and l.granted
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid = $3 and l.objsubid = 2 and l.objid::bigint = (hashtext(j.id::text)::bigint & 4294967295))`,
    [`${prefix}%`, graceSeconds, leaseSpace],
  );
}

/** Whether pg-boss has made its job table yet (an API started before any worker, a fresh database). */
export async function jobTableExists(db: PgBoss.Db): Promise<boolean> {
  const [r] = await rowsOf<{ t: string | null }>(db, `select to_regclass('${JOB}')::text as t`, []);
  return Boolean(r?.t);
}

/**
 * Jobs of the queues `prefix%` that pg-boss holds, in any state, in its job table and its archive
 * (the bench counts the jobs a reboot ran with it; a completed action job is deleted, not counted here).
 */
export async function heldJobCount(db: PgBoss.Db, prefix: string): Promise<number> {
  const [r] = await rowsOf<{ n: number }>(
    db,
    `select (select count(*) from ${JOB} where name like $1) + (select count(*) from ${ARCHIVE} where name like $1) as n`,
    [`${prefix}%`],
  );
  return Number(r?.n ?? 0);
}

/** The jobs still open (waiting, retrying, running or failed): what a node's work is now. */
const OPEN = `state in ('created', 'retry', 'active', 'failed')`;

export interface OpenJobRow {
  name: string;
  data: { due?: boolean; action?: string; attempt?: number | null } | null;
  state: string;
  retry_count: number;
  retry_limit: number;
  start_after: Date;
  output: { error?: string; reason?: string } | null;
}

/** A node's open jobs of the queues `prefix%`, newest first (at most 20): its own (singleton key: the id) and the due jobs naming it. */
export function componentOpenJobs(db: PgBoss.Db, prefix: string, id: string): Promise<OpenJobRow[]> {
  return rowsOf<OpenJobRow>(
    db,
    `select name, data, state::text as state, retry_count, retry_limit, start_after, output
    from ${JOB} where name like $1 and (singleton_key = $2 or (data ? 'due' and data->'ids' ? $2)) and ${OPEN}
    order by created_on desc limit 20`,
    [`${prefix}%`, id],
  );
}

/** A session's open jobs of the queues `prefix%`, counted per queue and state. */
export function sessionOpenJobCounts(
  db: PgBoss.Db,
  prefix: string,
  tenant: string,
  session: string,
): Promise<Array<{ name: string; state: string; count: number }>> {
  return rowsOf(
    db,
    `select name, state::text as state, count(*)::int as count from ${JOB}
    where name like $1 and data->>'session' = $2 and data->>'tenant' = $3 and ${OPEN}
    group by name, state order by name, state`,
    [`${prefix}%`, session, tenant],
  );
}

/** Waiting jobs per queue: due now, deferred, and the oldest due one's wait (pg-boss's partial index job_i5 on (name, start_after) where state < 'active'). */
export function waitingJobsByQueue(db: PgBoss.Db): Promise<Array<{ queue: string; due: number; deferred: number; oldest: number }>> {
  return rowsOf(
    db,
    `select name as queue,
      count(*) filter (where start_after <= now())::int as due,
      count(*) filter (where start_after > now())::int as deferred,
      coalesce(extract(epoch from now() - min(start_after) filter (where start_after <= now())), 0)::float8 as oldest
    from ${JOB} where state < 'active' group by name`,
    [],
  );
}

/**
 * pg-boss 10.4.2's `fail` as its manager.js defines it: `fail(name, id, data, options)` where `id` may be
 * an array (mapCompletionIdArg), failing them in one statement with `data` as every job's output. Its
 * types.d.ts declares the array form without `data` (`fail(name, ids, options)`), which at run time
 * would take the options for the output.
 */
type FailByIds = (name: string, ids: string[], data: object, options: PgBoss.ConnectionOptions) => Promise<unknown>;

/**
 * Fail jobs with `output` (pg-boss retries those with retries left, with its backoff), then cap their
 * backoff (capRetryStart): two statements for the whole set, on `db` (a transaction's, or pg-boss's pool).
 */
export async function failJobs(
  boss: PgBoss,
  db: PgBoss.Db,
  queue: string,
  ids: string[],
  output: object,
  defaultMaxDelaySeconds: number,
): Promise<void> {
  if (ids.length === 0) return;
  const fail: FailByIds = boss.fail.bind(boss) as FailByIds;
  await fail(queue, ids, output, { db });
  await capRetryStart(db, queue, ids, defaultMaxDelaySeconds);
}
