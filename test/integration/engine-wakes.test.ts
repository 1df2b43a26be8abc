/**
 * Wakes (scheduler.wakeAt, engine/runtime.ts): a wake is due at the moment asked, rounded up to a tenth
 * of a second, and the wakes asked for one such moment are one timer job; the process that asks hears
 * of it (its engine looks for the timer when it is due, not at pg-boss's next fetch). Whole seconds made
 * a 1 s transit re-poll come 1 to 2 s after the pass that asked for it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pino from 'pino';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startBoss, type BossHandle } from '../../src/engine/runtime.ts';

let db: TestDb;
let boss: BossHandle;

beforeAll(async () => {
  db = await freshDb();
  boss = await startBoss(db.url, pino({ level: 'silent' }));
});
afterAll(async () => {
  await boss?.stop();
  await db?.drop();
});

const timers = async () =>
  (
    await db.pool.query<{ key: string; at: number }>(
      `select singleton_key as key, (extract(epoch from start_after) * 1000)::bigint as at
         from pgboss.job where name = 'bootorch-timer' and singleton_key like 'wake:%' order by start_after`,
    )
  ).rows.map((r) => ({ key: r.key, at: Number(r.at) }));

describe('wakes', () => {
  test('are due within a tenth of a second of the moment asked; one timer job per moment', async () => {
    const heard: number[] = [];
    const off = boss.scheduler.onDue((due) => heard.push(due));
    // An hour on, at .x01 s, .x42 s and .x99 s of one tenth, and one in the next tenth.
    const base = Math.ceil((Date.now() + 3_600_000) / 1000) * 1000;
    for (const ms of [1201, 1242, 1299, 1301]) await boss.scheduler.wakeAt(db.db, 'status', new Date(base + ms));
    off();
    await boss.scheduler.wakeAt(db.db, 'status', new Date(base + 5000));
    expect(await timers()).toEqual([
      { key: `wake:status@${base + 1300}`, at: base + 1300 },
      { key: `wake:status@${base + 1400}`, at: base + 1400 },
      { key: `wake:status@${base + 5000}`, at: base + 5000 },
    ]);
    expect(heard).toEqual([base + 1300, base + 1300, base + 1300, base + 1400]);
  });
});
