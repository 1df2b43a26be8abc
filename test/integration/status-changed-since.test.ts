/**
 * The selection a changed-only status pass reads (db/components/select.ts changedSince): the components
 * written since a pass's snapshot, by any writer, including those whose only write was to their disk
 * deploy (the agent's heartbeats touch component_deploys, not components); nothing else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { passSnapshot, selectComponents } from '../../src/db/components/select.ts';

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

/**
 * A pass's snapshot and whether it is exact. The snapshot's xmin is the oldest transaction still in
 * flight on the whole server (other databases too, such as other test files'): rows written after
 * that one began count as changed, so a pass may read more than changed, never less. Only a snapshot
 * taken with nothing in flight (xmin = xmax) makes "nothing else" exact.
 */
async function snapshot(): Promise<{ since: string; exact: boolean }> {
  const since = await passSnapshot(db.db);
  const r = await db.pool.query<{ xmax: string }>('select pg_snapshot_xmax(pg_current_snapshot())::text as xmax');
  return { since, exact: r.rows[0]!.xmax === since };
}

/** What a changed-only pass from `s` reads: exactly `ids` when the snapshot is exact, else at least them. */
async function expectChanged(s: { since: string; exact: boolean }, ids: string[]) {
  const got = await changed(s.since);
  if (s.exact) expect(got).toEqual(ids);
  else expect(got).toEqual(expect.arrayContaining(ids));
}

describe('changed-only status selection', () => {
  it('reads the components written since the snapshot, a deploy heartbeat included, and nothing else', async () => {
    const first = await snapshot();
    await expectChanged(first, []);
    await db.pool.query(`update components set error = 'x' where id = $1`, [ids[1]]);
    await db.pool.query(`update component_deploys set state = 'starting' where id = $1`, [ids[2]]);
    await expectChanged(first, [ids[1]!, ids[2]!]);
    // A later pass's snapshot leaves them behind (when exact); a new write shows again.
    const next = await snapshot();
    await expectChanged(next, []);
    await db.pool.query(`update components set error = '' where id = $1`, [ids[3]]);
    await expectChanged(next, [ids[3]!]);
    await expectChanged(first, [ids[1]!, ids[2]!, ids[3]!]);
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
