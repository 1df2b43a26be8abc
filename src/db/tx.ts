/**
 * Transactions over one pool client, handed to the callback as the same `Db` handle everything else
 * takes. The scheduler enqueues pg-boss jobs through the handle's client, so a state change and the
 * jobs it causes commit together.
 */
import pg from 'pg';
import { drizzleOver, type Db } from './client.ts';

const afterCommitHooks = new WeakMap<Db, Array<() => void>>();

/** Run `f` after the transaction `tx` commits (never when it rolls back); at once outside a transaction. */
export function afterCommit(tx: Db, f: () => void): void {
  const hooks = afterCommitHooks.get(tx);
  if (hooks) hooks.push(f);
  else f();
}

/** Whether the handle is an open transaction (its client is checked out) rather than the pool. */
export function inTransaction(db: Db): boolean {
  return !(db.$client instanceof pg.Pool);
}

/**
 * Run `fn` in a transaction. Given a handle that already is a transaction, `fn` joins it (one
 * COMMIT, by whoever opened it).
 */
export async function transaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  if (inTransaction(db)) return fn(db);
  const client = await (db.$client as pg.Pool).connect();
  // pg-pool takes its error listener off a client it hands out: a server that goes away between two
  // queries of this transaction (PostgreSQL restarted) would be an unhandled 'error' event, which ends
  // the process. With this one the next query fails instead, and the catch below discards the client.
  let lost: Error | undefined;
  const onError = (e: Error) => {
    lost = e;
  };
  client.on('error', onError);
  const release = (err?: Error) => {
    client.removeListener('error', onError);
    client.release(err);
  };
  const after: Array<() => void> = [];
  const tx = drizzleOver(client);
  afterCommitHooks.set(tx, after);
  let released = false;
  try {
    await client.query('BEGIN');
    const result = await fn(tx);
    await client.query('COMMIT');
    release();
    released = true;
    for (const f of after) {
      try {
        f();
      } catch {
        /* after-commit hooks are best effort */
      }
    }
    return result;
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch {
      /* connection may be gone */
    }
    if (!released) release(lost ?? (e instanceof Error && /terminat|ECONNRESET|Connection/.test(e.message) ? e : undefined));
    released = true;
    throw e;
  }
}
