/**
 * Connections: a pg pool, drizzle over it, and migrations. Everything that runs SQL takes a `Db`
 * (the pool-backed database or a transaction), so a state change and the jobs it causes can commit together.
 */
import pg from 'pg';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import * as schema from './schema.ts';

export type Database = NodePgDatabase<typeof schema>;
/** A database handle or an open transaction. */
export type Db = Database | Parameters<Parameters<Database['transaction']>[0]>[0];

export interface Connection {
  pool: pg.Pool;
  db: Database;
  url: string;
  close(): Promise<void>;
}

export const migrationsFolder = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle');

export function connect(url: string, opts: { max?: number; applicationName?: string } = {}): Connection {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'bootorch',
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that loses its server (Postgres restarted) must not crash the process; the pool
  // replaces it on the next checkout.
  pool.on('error', () => {});
  const db = drizzle(pool, { schema });
  return { pool, db, url, close: () => pool.end() };
}

/** Any fixed number: every bootorch process that migrates takes this lock first. */
const MIGRATION_LOCK = 727_001;

/**
 * Apply pending migrations. Several processes may start at once (two API replicas and a worker): a
 * session advisory lock makes them take turns, so the first applies and the others find nothing to do.
 */
export async function runMigrations(db: Database): Promise<void> {
  const client = await ((db as unknown as { $client: pg.Pool }).$client).connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await migrate(db, { migrationsFolder });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
