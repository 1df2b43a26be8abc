/**
 * The selection a changed-only status pass reads (db/components/select.ts changedSince): the components
 * written since a pass's snapshot, by any writer, including those whose only write was to their disk
 * deploy (the agent's heartbeats touch component_deploys, not components) or an action batch's record
 * (acted_batches: acting writes no component row); nothing else.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { forgetActed, passSnapshot, recordActed, selectComponents } from '../../src/db/components/select.ts';

let db: TestDb;
const ids = ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s0b0n2', 'x1000c0s0b0n3'];

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query('insert into components (id, enabled) select unnest($1::text[]), true', [ids]);
  await db.pool.query(
    `insert into component_deploys (id, session, spec) values ($1, 's', '{"image":{"url":"http://i","format":"raw","sha256":"0"}}')`,
    [ids[2]],
  );
});
afterAll(async () => {
  await db?.drop();
});

const changed = async (since: string) => (await selectComponents(db.db, { enabled: true, changedSince: since })).map((c) => c.id);

/** What a changed-only pass from the snapshot `since` reads: exactly `ids`. */
async function expectChanged(since: string, ids: string[]) {
  expect(await changed(since)).toEqual(ids);
}

describe('changed-only status selection', () => {
  it('reads the components written since the snapshot, a deploy heartbeat included, and nothing else', async () => {
    const first = await passSnapshot(db.db);
    await expectChanged(first, []);
    await db.pool.query(`update components set error = 'x' where id = $1`, [ids[1]]);
    await db.pool.query(`update component_deploys set state = 'starting' where id = $1`, [ids[2]]);
    await expectChanged(first, [ids[1]!, ids[2]!]);
    // A later pass's snapshot leaves them behind; a new write shows again.
    const next = await passSnapshot(db.db);
    await expectChanged(next, []);
    await db.pool.query(`update components set error = '' where id = $1`, [ids[3]]);
    await expectChanged(next, [ids[3]!]);
    await expectChanged(first, [ids[1]!, ids[2]!, ids[3]!]);
  });

  it('is exact while a transaction of another database is in flight (the oldest xid on the server)', async () => {
    // A transaction open in another database, from before the snapshot to after the writes: it is the
    // server's oldest in flight, so a selection by the snapshot's xmin alone would count every row
    // written since it began, these four included.
    const other = new pg.Client({ connectionString: inject('adminUrl') });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select pg_current_xact_id()');
      await db.pool.query(`update components set error = 'before' where id = any($1)`, [ids]);
      const since = await passSnapshot(db.db);
      await expectChanged(since, []);
      await db.pool.query(`update components set error = '' where id = $1`, [ids[0]]);
      await expectChanged(since, [ids[0]!]);
      await other.query('commit');
    } finally {
      await other.end();
    }
  });

  it('counts the nodes an action batch acted on as changed, until a pass that saw the batch forgets it', async () => {
    const since = await passSnapshot(db.db);
    await recordActed(db.db, [ids[0]!, ids[3]!]);
    await expectChanged(since, [ids[0]!, ids[3]!]);
    // A batch completing while the next pass begins: in flight at its snapshot, so that pass leaves
    // it for the one after, and does not forget it.
    const open = await db.pool.connect();
    try {
      await open.query('begin');
      await open.query(`insert into acted_batches (ids) values ($1)`, [[ids[1]]]);
      const next = await passSnapshot(db.db);
      await open.query('commit');
      await expectChanged(next, [ids[1]!]);
      await forgetActed(db.db, next);
      const left = await db.pool.query<{ ids: string[] }>('select ids from acted_batches');
      expect(left.rows.map((r) => r.ids)).toEqual([[ids[1]]]);
      // Forgotten: no pass reads the first batch's nodes again, even from before it.
      await expectChanged(since, [ids[1]!]);
    } finally {
      open.release();
    }
    const after = await passSnapshot(db.db);
    await forgetActed(db.db, after);
    expect((await db.pool.query('select count(*)::int as n from acted_batches')).rows[0].n).toBe(0);
    await expectChanged(since, []);
  });

  it('sees a write whose transaction began before the snapshot and committed after it', async () => {
    const open = await db.pool.connect();
    try {
      await open.query('begin');
      await open.query(`update components set error = 'late' where id = $1`, [ids[0]]);
      const since = await passSnapshot(db.db);
      await open.query('commit');
      expect(await changed(since)).toContain(ids[0]);
    } finally {
      open.release();
    }
  });
});
