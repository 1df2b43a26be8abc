/**
 * Transactions over one pool client, exposed both as drizzle (`tx.db`) and as the narrow
 * `executeSql` port pg-boss takes, so a state change and the jobs it causes commit together.
 */
import type pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import * as schema from './schema.ts';
import type { Database } from './client.ts';

export interface Tx {
  db: Database;
  client: pg.PoolClient;
  /** pg-boss `db` option: runs its SQL inside this transaction. */
  executeSql(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
  /** Run after COMMIT (e.g. wake an in-process worker). */
  afterCommit(fn: () => void): void;
}

export async function transaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // pg-pool takes its error listener off a client it hands out: a server that goes away between two
  // queries of this transaction (PostgreSQL restarted) would be an unhandled 'error' event, which ends
  // the process. With this one the next query fails instead, and the catch below discards the client.
  let lost: Error | undefined;
  const onError = (e: Error) => { lost = e; };
  client.on('error', onError);
  const release = (err?: Error) => { client.removeListener('error', onError); client.release(err); };
  const after: Array<() => void> = [];
  const tx: Tx = {
    db: drizzle(client, { schema }) as unknown as Database,
    client,
    executeSql: (text, values) => client.query(text, values as any[]),
    afterCommit: (f) => after.push(f),
  };
  let released = false;
  try {
    await client.query('BEGIN');
    const result = await fn(tx);
    await client.query('COMMIT');
    release();
    released = true;
    for (const f of after) {
      try { f(); } catch { /* after-commit hooks are best effort */ }
    }
    return result;
  } catch (e) {
    try { await client.query('ROLLBACK'); } catch { /* connection may be gone */ }
    if (!released) release(lost ?? (e instanceof Error && /terminat|ECONNRESET|Connection/.test(e.message) ? e : undefined));
    released = true;
    throw e;
  }
}
