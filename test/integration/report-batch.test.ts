/**
 * Reports coalesced into one batch write exactly what the same reports write one by one
 * (reportBootState, a batch of one, which the API tests cover in depth): for known and unknown
 * tokens, refused (409) and missing components, and a node reporting twice in one batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { reportBootState } from '../../src/engine/reports.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { noScheduler } from '../../src/engine/scheduler.ts';
import { writeReports } from '../../src/db/components/reports.ts';
import { readComponents } from '../../src/db/components/read.ts';
import { transaction } from '../../src/db/tx.ts';
import { EVENTS_CHANNEL } from '../../src/db/events.ts';
import pg from 'pg';

let db: TestDb;
beforeAll(async () => {
  db = await freshDb();
  await db.pool.query(`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok-a', 'k', 'p', 'i')`);
});
afterAll(async () => {
  await db?.drop();
});

// [name, component columns] — each is created twice: x1000cNs0b0n0 (single path) and x1000cNs0b0n1 (batched).
const CASES: Array<[string, Record<string, unknown>, string]> = [
  ['stable, known token', { enabled: false }, 'tok-a'],
  ['stable, unknown token keeps artifacts', { enabled: false, actual_kernel: 'old', actual_updated_at: '2026-01-01T00:00:00Z' }, 'tok-x'],
  ['mid-transition is refused', { enabled: true, phase: 'powering_off', last_action: 'powering_off_gracefully' }, 'tok-a'],
  ['after power-on is accepted', { enabled: true, phase: 'powering_on', last_action: 'powering_on' }, 'tok-a'],
];

async function insert(id: string, cols: Record<string, unknown>) {
  const keys = ['id', ...Object.keys(cols)];
  await db.pool.query(`insert into components (${keys.join(',')}) values (${keys.map((_, i) => `$${i + 1}`).join(',')})`, [
    id,
    ...Object.values(cols),
  ]);
}

const comparable = (r: any) => ({
  ...r,
  id: undefined,
  updated_at: undefined,
  actual_updated_at: r.actual_updated_at
    ? Date.now() - r.actual_updated_at.getTime() < 60_000
      ? 'now'
      : r.actual_updated_at.toISOString()
    : null,
});

describe('batched reports', () => {
  it('write the same rows and answer the same as single reports', async () => {
    for (const [i, [, cols]] of CASES.entries()) {
      await insert(`x1000c${i}s0b0n0`, cols);
      await insert(`x1000c${i}s0b0n1`, cols);
    }
    const batcher = createReportBatcher(db.db, noScheduler);
    const batched = await Promise.all(CASES.map(([, , token], i) => batcher.report({ id: `x1000c${i}s0b0n1`, token, actor: 'node' })));
    for (const [i, [name, , token]] of CASES.entries()) {
      const single = await reportBootState(db.db, noScheduler, { id: `x1000c${i}s0b0n0`, token, actor: 'node' });
      const b = batched[i]!;
      expect(b.ok, name).toBe(single.ok);
      if (single.ok && b.ok) expect(b.tokenKnown, name).toBe(single.tokenKnown);
      if (!single.ok && !b.ok) expect(b.code, name).toBe(single.code);
      const rows = (
        await db.pool.query(`select * from components where id in ($1, $2) order by id`, [`x1000c${i}s0b0n0`, `x1000c${i}s0b0n1`])
      ).rows;
      expect(comparable(rows[1]), name).toEqual(comparable(rows[0]));
    }
    const missing = await batcher.report({ id: 'x9999c0s0b0n0', token: 'tok-a', actor: 'node' });
    expect(missing).toMatchObject({ ok: false, code: 'NOT_FOUND' });
    const events = (
      await db.pool.query(`select component_id, kind, actor from component_events where kind = 'report' order by component_id`)
    ).rows;
    expect(events.map((e) => e.component_id)).toEqual(expect.arrayContaining(['x1000c0s0b0n0', 'x1000c0s0b0n1']));
  });

  it('a node reporting twice in one batch: the last report wins', async () => {
    await insert('x2000c0s0b0n0', { enabled: false });
    const batcher = createReportBatcher(db.db, noScheduler);
    const [a, b] = await Promise.all([
      batcher.report({ id: 'x2000c0s0b0n0', token: 'tok-x', actor: 'node' }),
      batcher.report({ id: 'x2000c0s0b0n0', token: 'tok-a', actor: 'node' }),
    ]);
    expect(a.ok && b.ok).toBe(true);
    const [row] = (await db.pool.query(`select actual_bss_token, actual_kernel from components where id = 'x2000c0s0b0n0'`)).rows;
    expect(row).toEqual({ actual_bss_token: 'tok-a', actual_kernel: 'k' });
  });

  it('one batch with a node twice, a refused node and a missing one: results in order, one event per written node, one NOTIFY', async () => {
    await insert('x3000c0s0b0n0', { enabled: true, phase: 'powering_on', last_action: 'powering_on' });
    await insert('x3000c0s0b0n1', { enabled: true, phase: 'powering_off', last_action: 'powering_off_gracefully' });
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.channel));
    await listener.query(`listen ${EVENTS_CHANNEL}`);
    try {
      const results = await transaction(db.db, (tx) =>
        writeReports(tx, [
          { id: 'x3000c0s0b0n0', token: 'tok-x', actor: 'first' },
          { id: 'x3000c0s0b0n1', token: 'tok-a', actor: 'node' },
          { id: 'x3999c0s0b0n0', token: 'tok-a', actor: 'node' },
          { id: 'x3000c0s0b0n0', token: 'tok-a', actor: 'last' },
        ]),
      );
      expect(results.map((r) => (r.ok ? `ok ${r.id} ${r.tokenKnown}` : r.code))).toEqual([
        'ok x3000c0s0b0n0 true',
        'CONFLICT',
        'NOT_FOUND',
        'ok x3000c0s0b0n0 true',
      ]);
      expect(results[1]).toMatchObject({ message: expect.stringContaining('power_off_gracefully_called after powering_off_gracefully') });
      const [r0] = await readComponents(db.db, ['x3000c0s0b0n0']);
      expect(r0).toMatchObject({ actualBssToken: 'tok-a', actualKernel: 'k', status: 'power_on_called' });
      expect(r0!.actualUpdatedAt).toBeInstanceOf(Date);
      const events = (
        await db.pool.query(
          `select component_id, kind, actor, from_phase, to_phase, from_status, to_status, reason, data
           from component_events where component_id like 'x3%' order by id`,
        )
      ).rows;
      expect(events).toEqual([
        {
          component_id: 'x3000c0s0b0n0',
          kind: 'report',
          actor: 'last',
          from_phase: 'powering_on',
          to_phase: 'powering_on',
          from_status: 'power_on_called',
          to_status: 'power_on_called',
          reason: 'node reported its boot',
          data: { token: 'tok-a', tokenKnown: true },
        },
      ]);
      // Only refused: nothing written, no event, no NOTIFY.
      await transaction(db.db, (tx) => writeReports(tx, [{ id: 'x3000c0s0b0n1', token: 'tok-a', actor: 'node' }]));
      await listener.query('select 1');
      expect(heard).toEqual([EVENTS_CHANNEL]);
    } finally {
      await listener.end();
    }
  });
});
