/**
 * Actual-state cleanup writes nothing for a node written since it was read: neither the row (its
 * guard) nor an event on its timeline (the event used to be written for every row read).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { selectComponents } from '../../src/db/components/select.ts';
import { clearActualState } from '../../src/db/components/actions.ts';

let db: TestDb;
beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  await db?.drop();
});

it('clears and records only the rows unchanged since they were read', async () => {
  await db.pool.query(`insert into components (id, actual_kernel, actual_updated_at)
    values ('x1000c0s0b0n0', 'k-old', now() - interval '1 day'), ('x1000c0s0b0n1', 'k-old', now() - interval '1 day')`);
  const rows = await selectComponents(db.db, { ids: ['x1000c0s0b0n0', 'x1000c0s0b0n1'] });
  // A report lands on n1 after the cleanup read it.
  await db.pool.query(`update components set actual_kernel = 'k-new', actual_updated_at = now() where id = 'x1000c0s0b0n1'`);
  expect(await clearActualState(db.db, rows, 'test')).toEqual(['x1000c0s0b0n0']);
  const after = await db.pool.query('select id, actual_kernel from components order by id');
  expect(after.rows).toEqual([
    { id: 'x1000c0s0b0n0', actual_kernel: '' },
    { id: 'x1000c0s0b0n1', actual_kernel: 'k-new' },
  ]);
  const events = await db.pool.query(`select component_id from component_events where action = 'actual_state_cleanup'`);
  expect(events.rows.map((r) => r.component_id)).toEqual(['x1000c0s0b0n0']);
});
