/**
 * Connections: a pg pool, drizzle over it, and migrations. Every function that runs SQL takes one
 * handle type, `Db`: drizzle over the pool (each statement on its own) or over the client of an open
 * transaction (db/tx.ts), so a state change and the jobs it causes can commit together.
 */
import pg from 'pg';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import * as schema from './schema.ts';

/** The one database handle: drizzle over the pool, or over the client of an open transaction. */
export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool | pg.PoolClient };

export interface Connection {
  pool: pg.Pool;
  db: Db;
  url: string;
  close(): Promise<void>;
}

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/** drizzle over a pool or a checked-out client (transactions). */
export function drizzleOver(client: pg.Pool | pg.PoolClient): Db {
  return drizzle(client, { schema }) as Db;
}

/**
 * Behind a pooler in transaction mode (PgBouncer) consecutive statements of one client may run on
 * different server sessions: a LISTEN, a session advisory lock and a named prepared statement would
 * stay behind on a session someone else gets. Connections that need a session of their own (the
 * LISTEN and lock holders, which build their own clients from the pool's URL) take it from here; the
 * report path asks whether named statements are allowed on its client.
 */
const sessionUrls = new Map<string, string>();
const unnamedOnly = new WeakSet<object>();

/** Where a dedicated session for `url`'s database goes: DATABASE_SESSION_URL when set for it, else `url`. */
export const sessionUrlOf = (url: string): string => sessionUrls.get(url) ?? url;

/** A pool's connection settings for a dedicated session (LISTEN) on its database. */
export function sessionConfigOf(pool: pg.Pool): pg.ClientConfig {
  const o = pool.options as pg.ClientConfig;
  return o.connectionString ? { ...o, connectionString: sessionUrlOf(o.connectionString) } : o;
}

/** Whether named prepared statements may be used on this pool or pool client (BOOTORCH_NAMED_STATEMENTS). */
export const namedStatementsAllowed = (client: object): boolean => !unnamedOnly.has(client);

export function connect(
  url: string,
  opts: { max?: number; applicationName?: string; sessionUrl?: string; namedStatements?: boolean } = {},
): Connection {
  if (opts.sessionUrl && opts.sessionUrl !== url) sessionUrls.set(url, opts.sessionUrl);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'bootorch',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that loses its server (Postgres restarted) must not crash the process; the pool
  // replaces it on the next checkout.
  pool.on('error', () => {});
  // Nor one that is checked out (pg-pool takes its own listener off while it is): a server shutting
  // down (a failover: FATAL 57P01) between a transaction's statements emits 'error' on it, with no
  // query to reject. The next statement on it fails, its caller sees that, and the pool drops it.
  pool.on('connect', (client) => client.on('error', ignoreError));
  if (opts.namedStatements === false) {
    unnamedOnly.add(pool);
    pool.on('connect', (client) => unnamedOnly.add(client));
  }
  return { pool, db: drizzleOver(pool), url, close: () => pool.end() };
}

const ignoreError = () => {};

/**
 * A connection of its own (LISTEN, advisory locks, migrations), never a pool's. pg emits 'error' on a
 * client when its server goes away while no query runs (a failover's FATAL 57P01, a reset), and an
 * 'error' with no listener ends the process: this one always has one. What went wrong reaches the
 * caller anyway, as a rejected query or the client's 'end'.
 */
export function sessionClient(config: pg.ClientConfig): pg.Client {
  const client = new pg.Client(config);
  client.on('error', ignoreError);
  return client;
}

/** The pool behind a handle (a transaction's handle has none: it holds one client). */
export function poolOf(db: Db): pg.Pool {
  if (!(db.$client instanceof pg.Pool)) throw new Error('poolOf: this handle is an open transaction, not the pool');
  return db.$client;
}

/** Any fixed number: every bootorch process that migrates takes this lock first. */
const MIGRATION_LOCK = 727_001;

/**
 * Apply pending migrations. Several processes may start at once (two API replicas and a worker): a
 * session advisory lock makes them take turns, so the first applies and the others find nothing to do.
 */
export async function runMigrations(db: Db): Promise<void> {
  const client = sessionClient({ ...sessionConfigOf(poolOf(db)), application_name: 'bootorch-migrate' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(db, { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    await client.end().catch(() => {});
  }
}

/** Db liveness for health checks: true when a trivial query answers within `timeoutMs`. Never throws. */
export async function databaseHealthy(db: Db, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      db.execute(sql`select 1`).then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The database's time, in ms since the epoch: the one clock the engine measures ages on (engine/clock.ts). */
export async function databaseNow(db: Db): Promise<number> {
  const r = await db.execute<{ ms: string }>(sql`select (extract(epoch from now()) * 1000)::float8::text as ms`);
  return Number(r.rows[0]!.ms);
}
