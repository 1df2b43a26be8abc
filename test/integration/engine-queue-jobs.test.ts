/**
 * The statements of src/engine/queue/jobs.ts against a real pg-boss 10.4.2 schema: each does what its
 * comment says, on pg-boss's own pool and inside a transaction of bootorch's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pino from 'pino';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startBoss, type BossHandle } from '../../src/engine/runtime.ts';
import {
  bossDbOf,
  capRetryStart,
  deleteActiveJobs,
  failJobs,
  fetchDueJobs,
  heldJobCount,
  jobTableExists,
  otherActiveJobExists,
  waitingJobsByQueue,
} from '../../src/engine/queue/jobs.ts';
import { transaction } from '../../src/db/tx.ts';

let db: TestDb;
let boss: BossHandle;
const q = 'bootorch-test-queue';
const state = async (id: string) =>
  (
    await db.pool.query(
      `select state::text, retry_count, extract(epoch from start_after - now())::float8 as wait, output from pgboss.job where id = $1`,
      [id],
    )
  ).rows[0] as { state: string; retry_count: number; wait: number; output: Record<string, unknown> } | undefined;

beforeAll(async () => {
  db = await freshDb();
  boss = await startBoss(db.url, pino({ level: 'silent' }));
  await boss.boss.createQueue(q, { name: q, policy: 'standard', retryLimit: 5, retryDelay: 1, retryBackoff: true });
});
afterAll(async () => {
  await boss?.stop();
  await db?.drop();
});

it('fetches due jobs in start_after order, at most `size`, and counts a restarted job as a retry', async () => {
  expect(await jobTableExists(boss.boss.getDb())).toBe(true);
  const late = await boss.boss.send(q, { n: 'late' }, { startAfter: new Date(Date.now() - 1000) });
  const early = await boss.boss.send(q, { n: 'early' }, { startAfter: new Date(Date.now() - 60_000) });
  const future = await boss.boss.send(q, { n: 'future' }, { startAfter: 3600 });
  expect((await waitingJobsByQueue(boss.boss.getDb())).find((r) => r.queue === q)).toMatchObject({ due: 2, deferred: 1 });
  const first = await fetchDueJobs<{ n: string }>(boss.boss.getDb(), q, 1);
  expect(first.map((j) => [j.id, j.data.n, j.retry_count])).toEqual([[early, 'early', 0]]);
  expect(await otherActiveJobExists(boss.boss.getDb(), q, [])).toBe(true);
  expect(await otherActiveJobExists(boss.boss.getDb(), q, [early!])).toBe(false);
  const rest = await fetchDueJobs<{ n: string }>(boss.boss.getDb(), q, 10);
  expect(rest.map((j) => j.id)).toEqual([late]);
  // Completed: deleted inside a transaction of bootorch's (seen from another connection once it commits).
  await transaction(db.db, async (tx) => {
    await deleteActiveJobs(bossDbOf(tx), q, [late!]);
    expect(await state(late!)).toMatchObject({ state: 'active' });
  });
  expect(await state(late!)).toBeUndefined();
  await deleteActiveJobs(boss.boss.getDb(), q, [early!]);
  expect(await state(early!)).toBeUndefined();
  expect(await state(late!)).toBeUndefined();
  expect(await state(future!)).toMatchObject({ state: 'created' });
});

it('fails many jobs with one output, and caps their backoff at the data retryMaxDelay (else the default)', async () => {
  const withCap = await boss.boss.send(q, { retryMaxDelay: 2 }, { retryLimit: 9 });
  const withoutCap = await boss.boss.send(q, {}, { retryLimit: 9 });
  // Make both far into their backoff: the 9th retry of 1 s doubling would wait 256 to 512 s.
  await db.pool.query(`update pgboss.job set retry_count = 8 where id = any($1::uuid[])`, [[withCap, withoutCap]]);
  const got = await fetchDueJobs(boss.boss.getDb(), q, 10);
  expect(got.map((j) => j.id).sort()).toEqual([withCap, withoutCap].sort());
  await failJobs(boss.boss, boss.boss.getDb(), q, [withCap!, withoutCap!], { error: 'PCS unavailable' }, 7);
  const a = (await state(withCap!))!;
  const b = (await state(withoutCap!))!;
  expect(a).toMatchObject({ state: 'retry', retry_count: 8, output: { error: 'PCS unavailable' } });
  expect(b).toMatchObject({ state: 'retry', retry_count: 8, output: { error: 'PCS unavailable' } });
  expect(a.wait).toBeLessThanOrEqual(2);
  expect(b.wait).toBeLessThanOrEqual(7);
  expect(b.wait).toBeGreaterThan(2);
  // The cap only lowers: a job already due sooner keeps its start.
  await db.pool.query(`update pgboss.job set start_after = now() + interval '1 second' where id = $1`, [withoutCap]);
  await capRetryStart(boss.boss.getDb(), q, [withoutCap!], 7);
  expect((await state(withoutCap!))!.wait).toBeLessThanOrEqual(1);
  // Started again: a retry.
  await db.pool.query(`update pgboss.job set start_after = now() - interval '1 second' where id = $1`, [withCap]);
  const again = await fetchDueJobs(boss.boss.getDb(), q, 10);
  expect(again.map((j) => [j.id, j.retry_count])).toEqual([[withCap, 9]]);
});

it('counts the jobs pg-boss holds of the queues `prefix%`, in its job table and its archive', async () => {
  const held = await heldJobCount(boss.boss.getDb(), 'bootorch-test-');
  await boss.boss.send(q, { n: 'waiting' });
  const done = await boss.boss.send(q, { n: 'archived' });
  // What pg-boss's maintenance does with a completed job: moved to the archive.
  await db.pool.query(
    `with moved as (delete from pgboss.job where id = $1 returning *) insert into pgboss.archive select *, now() from moved`,
    [done],
  );
  expect(await heldJobCount(boss.boss.getDb(), 'bootorch-test-')).toBe(held + 2);
  expect(await heldJobCount(boss.boss.getDb(), 'bootorch-none-')).toBe(0);
});
