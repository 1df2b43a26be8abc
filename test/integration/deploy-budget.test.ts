/**
 * The deploy budget's accounting (db/deploys.ts admitDeploys) on a real database: never more than N
 * deploys hold a slot, a deploy whose image is written or that failed frees its slot, a repeated
 * admission takes no second slot, and the slot of a dead agent or of a worker that died after admitting
 * (the node never booted its ramdisk) comes back once that is late. Time passes by moving rows' stamps.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { admitDeploys, moveDeploys, setDeploys } from '../../src/db/deploys.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';

let t: TestDb;
beforeAll(async () => {
  t = await freshDb();
});
afterAll(async () => {
  await t?.drop();
});

const SPEC: DeployRecord = { image: { url: 'http://images/disk.img', format: 'raw', checksum: `sha256:${'0'.repeat(64)}` } };
const TIMES = { bootSeconds: 1200, silentSeconds: 300 };
const ids = (n: number, prefix = 'x1000c0s') => Array.from({ length: n }, (_, i) => `${prefix}${i}b0n0`);

/** Deploys holding a slot, counted as admitDeploys counts them (an admission of nobody). */
const holding = async () => (await admitDeploys(t.db, ['x9999c0s0b0n0'], 0, TIMES)).holding;
/** Move a stamp back in time, as if `seconds` had passed since. */
const age = (id: string, column: 'admitted_at' | 'heartbeat_at' | 'state_at', seconds: number) =>
  t.pool.query(`update component_deploys set ${column} = now() - make_interval(secs => $2) where id = $1`, [id, seconds]);

beforeEach(async () => {
  await t.pool.query('delete from component_deploys');
});

describe('admitDeploys', () => {
  it('admits up to the slots in the order given; the rest wait; a repeated call takes no second slot', async () => {
    const nodes = ids(10);
    await setDeploys(t.db, { name: 's1', tenantKey: '' }, [...nodes.map((id) => ({ id, deploy: SPEC })), { id: 'x1000c1s0b0n0' }]);
    const first = await admitDeploys(t.db, [...nodes, 'x1000c1s0b0n0'], 3, TIMES);
    expect(first).toEqual({ admitted: nodes.slice(0, 3), waiting: nodes.slice(3), holding: 3 });
    const again = await admitDeploys(t.db, nodes, 3, TIMES);
    expect(again).toEqual({ admitted: nodes.slice(0, 3), waiting: nodes.slice(3), holding: 3 });
    // Another session's deploys share the same slots.
    const other = ids(2, 'x2000c0s');
    await setDeploys(
      t.db,
      { name: 's2', tenantKey: 'vc-a' },
      other.map((id) => ({ id, deploy: SPEC })),
    );
    expect((await admitDeploys(t.db, other, 3, TIMES)).waiting).toEqual(other);
  });

  it('a written or failed deploy frees its slot at once; a running agent keeps it', async () => {
    const nodes = ids(5);
    await setDeploys(
      t.db,
      { name: 's1', tenantKey: '' },
      nodes.map((id) => ({ id, deploy: SPEC })),
    );
    await admitDeploys(t.db, nodes, 2, TIMES);
    await moveDeploys(t.db, [nodes[0]!], { state: 'downloading', heartbeat: true }, ['pending']);
    await moveDeploys(t.db, [nodes[1]!], { state: 'writing', heartbeat: true }, ['pending']);
    expect((await admitDeploys(t.db, nodes, 2, TIMES)).admitted).toEqual([]);
    await moveDeploys(t.db, [nodes[0]!], { state: 'written' }, ['downloading']);
    expect((await admitDeploys(t.db, nodes, 2, TIMES)).admitted).toEqual([nodes[2]]);
    await moveDeploys(t.db, [nodes[1]!], { state: 'failed', reason: 'write_error' }, ['writing']);
    expect((await admitDeploys(t.db, nodes, 2, TIMES)).admitted).toEqual([nodes[2], nodes[3]]);
    expect(await holding()).toBe(2);
  });

  it('a silent agent frees its slot after silentSeconds; an admitted node that never started, after bootSeconds', async () => {
    const nodes = ids(4);
    await setDeploys(
      t.db,
      { name: 's1', tenantKey: '' },
      nodes.map((id) => ({ id, deploy: SPEC })),
    );
    await admitDeploys(t.db, nodes, 2, TIMES);
    await moveDeploys(t.db, [nodes[0]!], { state: 'downloading', heartbeat: true }, ['pending']);
    await age(nodes[0]!, 'heartbeat_at', 299);
    expect(await holding()).toBe(2);
    await age(nodes[0]!, 'heartbeat_at', 301); // the agent died mid-download
    expect(await holding()).toBe(1);
    await age(nodes[1]!, 'admitted_at', 1201); // admitted by a worker that died before powering the node on
    expect(await holding()).toBe(0);
    // The late node is admitted again like any other, first come first served.
    expect((await admitDeploys(t.db, [nodes[1]!, nodes[2]!, nodes[3]!], 2, TIMES)).admitted).toEqual([nodes[1], nodes[2]]);
  });

  it('admissions racing from several engine processes never exceed the slots', async () => {
    const nodes = ids(60);
    await setDeploys(
      t.db,
      { name: 's1', tenantKey: '' },
      nodes.map((id) => ({ id, deploy: SPEC })),
    );
    // Six callers with overlapping candidates, each on its own pooled connection.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, k) => admitDeploys(t.db, [...nodes.slice(k * 10), ...nodes.slice(0, k * 10)], 7, TIMES)),
    );
    const admitted = new Set(results.flatMap((r) => r.admitted));
    expect(admitted.size).toBe(7);
    expect(await holding()).toBe(7);
  });

  it('a whole run: deploys start as others finish or fail, never more than N at once, and every node gets its turn', async () => {
    const nodes = ids(40);
    const N = 5;
    await setDeploys(
      t.db,
      { name: 's1', tenantKey: '' },
      nodes.map((id) => ({ id, deploy: SPEC })),
    );
    const done = new Set<string>();
    let round = 0;
    let peak = 0;
    while (done.size < nodes.length) {
      round++;
      const { admitted, holding: held } = await admitDeploys(
        t.db,
        nodes.filter((id) => !done.has(id)),
        N,
        TIMES,
      );
      peak = Math.max(peak, held);
      expect(held).toBeLessThanOrEqual(N);
      // The agents of the admitted nodes start; of those running, one in three ends (every fifth failing).
      await moveDeploys(t.db, admitted, { state: 'starting', heartbeat: true }, ['pending']);
      const running = (await t.pool.query(`select id from component_deploys where state = 'starting' order by id`)).rows.map((r) => r.id);
      const ending = running.filter((_, i) => (i + round) % 3 === 0);
      for (const [i, id] of ending.entries()) {
        await moveDeploys(t.db, [id], i % 5 === 4 ? { state: 'failed', reason: 'write_error' } : { state: 'written' }, ['starting']);
        done.add(id);
      }
      expect(round).toBeLessThan(200);
    }
    expect(peak).toBe(N);
    expect(await holding()).toBe(0);
  });
});
