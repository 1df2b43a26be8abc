/**
 * The node table at 100,000 nodes: a page deep in each sort order is answered from that order's index
 * (PostgreSQL's own count of index scans goes up), not by sorting the table, and costs about what the
 * first page does. The times are printed as figures; the index use is the pass mark. The last-change
 * order has no index (updated_at changes with every write, and an index on it would cost every write
 * its HOT update): its time is printed.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';
import { waitFor } from '../helpers/wait.ts';

const N = 100_000;
let h: Harness;

const PAGE = `query($f: ComponentFilter, $after: String, $o: ComponentOrder, $d: Boolean, $first: Int) {
  components(filter: $f, first: $first, after: $after, orderBy: $o, descending: $d) { nodes { id } pageInfo { endCursor } } }`;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`
    insert into components (id, enabled, phase, status_override, session, failure_reason, updated_at)
    select format('x%sc%ss%sb%sn%s', 1000 + g / 256, (g / 32) % 8, (g / 4) % 8, (g / 2) % 2, g % 2), g % 3 = 0,
      (array['', 'powering_on', 'powering_off', 'configuring'])[1 + g % 4], case when g % 97 = 0 then 'failed' else '' end,
      's' || (g % 50), case when g % 97 = 0 then 'power_on_timeout' else '' end, now() - (g % 5000) * interval '1 s'
    from generate_series(0, ${N - 1}) g`);
  await h.db.db.execute(sql`analyze components`);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

async function indexScans(index: string): Promise<number> {
  await h.db.pool.query('select pg_stat_clear_snapshot()');
  const r = await h.db.pool.query('select idx_scan from pg_stat_user_indexes where indexrelname = $1', [index]);
  return Number(r.rows[0]?.idx_scan ?? -1);
}

test.each([
  ['STATUS', 'components_status_id_idx'],
  ['PHASE', 'components_phase_id_idx'],
  ['FAILURE_REASON', 'components_reason_id_idx'],
  ['SESSION', 'components_session_id_idx'],
])('orderBy %s: a page 60,000 rows in is read from %s', async (order, index) => {
  // The cursor of row 60,000, reached in six pages of 10,000.
  let after: string | null = null;
  for (let k = 0; k < 6; k++) after = (await h.ok(PAGE, { o: order, after, first: 10_000 })).components.pageInfo.endCursor;
  const first = performance.now();
  await h.ok(PAGE, { o: order, first: 50 });
  const firstMs = performance.now() - first;
  const before = await indexScans(index);
  expect(before).toBeGreaterThanOrEqual(0);
  const t0 = performance.now();
  const deep = await h.ok(PAGE, { o: order, after, first: 50 });
  const deepMs = performance.now() - t0;
  expect(deep.components.nodes).toHaveLength(50);
  await waitFor(async () => (await indexScans(index)) > before, `${index} used for the deep page`, 10_000);
  process.stdout.write(`node table at ${N}: ${order} first page ${firstMs.toFixed(1)} ms, page at row 60,000 ${deepMs.toFixed(1)} ms\n`);
});

test('orderBy LAST_CHANGE (no index: every write changes it) sorts what the filters select: a figure', async () => {
  for (const filter of [{}, { status: ['FAILED'] }]) {
    const t0 = performance.now();
    const r = await h.ok(PAGE, { f: filter, o: 'LAST_CHANGE', d: true, first: 50 });
    const ms = performance.now() - t0;
    expect(r.components.nodes).toHaveLength(50);
    process.stdout.write(`node table at ${N}: LAST_CHANGE ${JSON.stringify(filter)} first page ${ms.toFixed(1)} ms\n`);
  }
});
