/**
 * Tick leases (src/engine/leases.ts): an operator tick left active by a process that is gone is failed
 * by the reaper, so its stately queue runs again; a tick whose process still holds its lease is left alone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pino from 'pino';
import pg from 'pg';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startBoss, type BossHandle } from '../../src/engine/runtime.ts';
import { queueOf } from '../../src/engine/queue/names.ts';
import { TickLeases } from '../../src/engine/leases.ts';
import { local, value } from '../helpers/metrics.ts';

let db: TestDb;
let boss: BossHandle;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  db = await freshDb();
  boss = await startBoss(db.url, log);
});
afterAll(async () => {
  await boss?.stop();
  await db?.drop();
});

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

/** bootorch_queue_jobs_reaped_total of `queue`, as this process counts it. */
const reaped = async (queue: string) => value(await local(), 'bootorch_queue_jobs_reaped_total', { queue });

const state = async (id: string) => (await db.pool.query('select state from pgboss.job where id = $1', [id])).rows[0]?.state as string;

describe('tick leases', () => {
  test('an orphaned active tick is failed, a held one is not; the reaped operator is kicked', async () => {
    // "Another process" fetched two ticks: it still holds the lease of one; the other's process is gone.
    const other = new TickLeases({
      url: db.url,
      log,
      queuePrefix: 'bootorch-',
      graceSeconds: 0,
      reapEveryMs: 60_000,
      quietAfterConnectMs: 0,
    });
    await other.start(boss.boss, async () => {});
    await boss.boss.send(queueOf('status'), {});
    const [orphan] = await boss.boss.fetch(queueOf('status'));
    await boss.boss.send(queueOf('power-on'), {});
    const [held] = await boss.boss.fetch(queueOf('power-on'));
    await other.hold(held!.id);
    expect(await state(orphan!.id)).toBe('active');

    const kicked: string[][] = [];
    const reaper = new TickLeases({ url: db.url, log, queuePrefix: 'bootorch-', graceSeconds: 0, reapEveryMs: 20, quietAfterConnectMs: 0 });
    await reaper.start(boss.boss, async (queues) => {
      kicked.push(queues);
    });
    try {
      await until(async () => (await state(orphan!.id)) === 'failed', 'orphan reaped');
      const rounds = reaper.rounds;
      await until(async () => reaper.rounds >= rounds + 3, 'three more reaper rounds');
      expect(await state(held!.id)).toBe('active');
      expect(kicked).toEqual([[queueOf('status')]]);
      expect(await reaped(queueOf('status'))).toBe(1);
      expect(await reaped(queueOf('power-on'))).toBe(0);

      // The holder's connection dies (SIGKILL closes it the same way): its tick is reaped too.
      const holders = await db.pool.query(
        `select pid from pg_stat_activity where application_name = 'bootorch-leases' and datname = current_database()`,
      );
      await other.stop();
      await until(async () => (await state(held!.id)) === 'failed', 'held tick reaped once its process is gone');
      expect(holders.rowCount).toBeGreaterThan(0);
    } finally {
      await reaper.stop();
    }
  });

  test('a reaper whose lock connection is new confirms nothing until it has settled (the database restarted: the others are re-taking theirs)', async () => {
    await boss.boss.send(queueOf('discovery'), {});
    const [orphan] = await boss.boss.fetch(queueOf('discovery'));
    const reaper = new TickLeases({
      url: db.url,
      log,
      queuePrefix: queueOf('discovery'),
      graceSeconds: 0,
      reapEveryMs: 20,
      quietAfterConnectMs: 800,
    });
    const connected = Date.now();
    await reaper.start(boss.boss, async () => {});
    try {
      await until(async () => reaper.rounds >= 5, 'five reaper rounds');
      if (Date.now() - connected < 700) expect(await state(orphan!.id)).toBe('active');
      await until(async () => (await state(orphan!.id)) === 'failed', 'orphan reaped once settled');
      expect(Date.now() - connected).toBeGreaterThanOrEqual(800);

      // Its connection cut and re-made: settling again, whatever it suspected before. The orphan appears
      // after the cut (one that appeared before it would be reaped by the rounds before the cut, in 40 ms).
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      const before = reaper.rounds;
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'bootorch-leases' and datname = current_database()`,
      );
      const cut = Date.now();
      await boss.boss.send(queueOf('discovery'), {});
      const [second] = await boss.boss.fetch(queueOf('discovery'));
      await until(async () => (await state(second!.id)) === 'failed', 'second orphan reaped after the reconnect settled');
      expect(Date.now() - cut).toBeGreaterThanOrEqual(800);
      expect(reaper.rounds).toBeGreaterThan(before);
      await admin.end();
    } finally {
      await reaper.stop();
    }
  });

  test('a process that loses its lock connection re-takes its leases', async () => {
    const mine = new TickLeases({ url: db.url, log, queuePrefix: 'bootorch-', graceSeconds: 0, reapEveryMs: 20, quietAfterConnectMs: 0 });
    await mine.start(boss.boss, async () => {});
    try {
      await boss.boss.send(queueOf('configuration'), {});
      const [job] = await boss.boss.fetch(queueOf('configuration'));
      await mine.hold(job!.id);
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'bootorch-leases' and datname = current_database()`,
      );
      const locked = async () =>
        (
          await admin.query(
            `select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${0x626f}
        and objid::bigint = (hashtext($1)::bigint & 4294967295)`,
            [job!.id],
          )
        ).rows[0].n === 1;
      await until(locked, 'lease re-taken after the connection was cut');
      await admin.end();
      expect(await state(job!.id)).toBe('active');
    } finally {
      await mine.stop();
    }
  });
});
