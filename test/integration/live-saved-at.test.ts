/**
 * sessionProgress ended, 2 runs in 3, with a `complete` status whose `savedAt` was null: the status
 * read its session row twice, and the session completed (with its snapshot) between the two reads.
 * Here the completion is made to commit exactly there, every time.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import * as schema from '../../src/db/schema.ts';
import type { Db } from '../../src/db/client.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { readSessionStatus } from '../../src/db/sessions/status.ts';
import { completeSession } from '../../src/db/sessions/lifecycle.ts';
import { transaction } from '../../src/db/tx.ts';

let db: TestDb;
beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  await db.drop();
});

/** A pool that runs `after` once, right after the first read of the sessions table returns. */
class CompletesAfterFirstSessionRead extends pg.Pool {
  after?: () => Promise<void>;
  query(...args: any[]): any {
    const text = typeof args[0] === 'string' ? args[0] : (args[0]?.text ?? '');
    const p = (super.query as (...a: any[]) => Promise<unknown>)(...args);
    if (!this.after || !/from "sessions"/.test(text)) return p;
    const after = this.after;
    this.after = undefined;
    return p.then(async (r) => {
      await after();
      return r;
    });
  }
}

test('a session that completes while its status is read shows as running or as the saved snapshot, never complete without savedAt', async () => {
  await db.pool.query(`insert into components (id, enabled, session, phase) values ('x1c0s0b0n0', false, 's1', '')`);
  await db.pool.query(`insert into sessions (name, operation, template_name, status) values ('s1', 'reboot', 't', 'running')`);
  const racy = new CompletesAfterFirstSessionRead({ connectionString: (db.pool.options as pg.PoolConfig).connectionString, max: 2 });
  try {
    const racyDb = drizzle(racy, { schema }) as unknown as Db;
    // The completion as the engine commits it: status and snapshot in one transaction.
    racy.after = () =>
      transaction(db.db, async (tx) => {
        expect(await completeSession(tx, { tenantKey: '', name: 's1' }, null, 'test')).toMatchObject({ result: 'complete', nodes: 1 });
      });
    const during = await readSessionStatus(racyDb, { tenantKey: '', name: 's1' });
    expect(racy.after).toBeUndefined(); // the completion did commit in the middle of the read
    expect(during).toMatchObject({ status: 'running', savedAt: null });
    const afterwards = await readSessionStatus(racyDb, { tenantKey: '', name: 's1' });
    expect(afterwards?.status).toBe('complete');
    expect(afterwards?.savedAt).not.toBeNull();
  } finally {
    await racy.end();
  }
});
