/** Keyset pagination over 10,000 components (inserted with one set-based statement), with filters. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { errorOf, startHarness, type Harness } from './api-harness.ts';

let h: Harness;
const N = 10_000;
const PAGE = `query($f: ComponentFilter, $first: Int, $after: String) {
  components(filter: $f, first: $first, after: $after) { nodes { id } pageInfo { hasNextPage endCursor } } }`;

beforeAll(async () => {
  h = await startHarness();
  // 40 Mountain cabinets' worth: x1000c0s0b0n0 ... ; every 10th enabled and powering on, every 7th in session s1.
  await h.db.db.execute(sql`
    insert into components (id, enabled, phase, session, last_action)
    select format('x%sc%ss%sb%sn%s', 1000 + g / 256, (g / 32) % 8, (g / 4) % 8, (g / 2) % 2, g % 2),
           g % 10 = 0, case when g % 10 = 0 then 'powering_on' else '' end, case when g % 7 = 0 then 's1' else '' end,
           case when g % 20 = 0 then 'powering_on' else '' end
    from generate_series(0, ${N - 1}) g`);
  await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) select 't', id from components where id like 'x1001c%'`);
  await h.db.db.execute(sql`analyze components`);
});
afterAll(async () => {
  await h?.close();
});

async function all(filter: Record<string, unknown> | undefined, first: number, headers?: Record<string, string>) {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  for (;;) {
    const r: any = await h.ok(PAGE, { f: filter, first, after }, headers);
    ids.push(...r.components.nodes.map((n: { id: string }) => n.id));
    pages += 1;
    if (!r.components.pageInfo.hasNextPage) break;
    after = r.components.pageInfo.endCursor;
  }
  return { ids, pages };
}

test('pages through every component once, in id order', async () => {
  const { ids, pages } = await all(undefined, 1000);
  expect(pages).toBe(10);
  expect(ids).toHaveLength(N);
  expect(new Set(ids).size).toBe(N);
  expect([...ids].sort()).toEqual(ids);
  const total = await h.ok(`{ components(first: 1) { totalCount } }`);
  expect(total.components.totalCount).toBe(N);
});

test('a page deep in the set costs what the first does (keyset, not offset)', async () => {
  const last = await h.db.db.execute(sql`select id from components order by id offset ${N - 1001} limit 1`);
  const after = Buffer.from(`c:${(last.rows[0] as { id: string }).id}`).toString('base64url');
  const time = async (a: string | null) => {
    const t = performance.now();
    const r = await h.ok(PAGE, { first: 1000, after: a });
    return { ms: performance.now() - t, n: r.components.nodes.length, more: r.components.pageInfo.hasNextPage };
  };
  await time(null);
  const first = await time(null);
  const deep = await time(after);
  expect(deep).toMatchObject({ n: 1000, more: false });
  expect(deep.ms).toBeLessThan(Math.max(500, first.ms * 4));
  const plan = await h.db.db.execute(sql`explain select * from components where id > ${'x1038c0s0b0n0'} order by id limit 1001`);
  expect(JSON.stringify(plan.rows)).toMatch(/Index Scan using components_pkey/);
});

test('filters combine with paging', async () => {
  const enabled = await all({ enabled: true, phase: 'POWERING_ON' }, 300);
  expect(enabled.ids).toHaveLength(N / 10);
  expect(enabled.pages).toBe(4);
  const called = await all({ enabled: true, status: ['POWER_ON_CALLED'] }, 1000);
  expect(called.ids).toHaveLength(N / 20);
  const pending = await h.ok(`{ components(filter: { status: [POWER_ON_PENDING, POWER_ON_CALLED] }, first: 1) { totalCount } }`);
  expect(pending.components.totalCount).toBe(N / 10);
  const s1 = await h.ok(`{ components(filter: { session: "s1" }, first: 1) { totalCount } }`);
  expect(s1.components.totalCount).toBe(Math.ceil(N / 7));
  const some = await h.ok(`{ components(filter: { ids: ["x1000c0s0b0n1", "X1000C0S0B0N0", "x9999c0s0b0n0"] }) { nodes { id } } }`);
  expect(some.components.nodes).toEqual([{ id: 'x1000c0s0b0n0' }, { id: 'x1000c0s0b0n1' }]);
  const tenant = await all(undefined, 100, { 'Cray-Tenant-Name': 't' });
  expect(tenant.ids).toHaveLength(256);
  expect(tenant.ids.every((id) => id.startsWith('x1001c'))).toBe(true);
});

test('bad page arguments name their field', async () => {
  expect(errorOf(await h.gql(PAGE, { first: 0 }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
  expect(errorOf(await h.gql(PAGE, { first: 10_001 }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'first' });
  expect(errorOf(await h.gql(PAGE, { after: 'garbage' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'after' });
  expect(errorOf(await h.gql(PAGE, { f: { ids: ['x1000c0s0b0n0', 'nope'] } }))).toMatchObject({
    code: 'BAD_USER_INPUT',
    field: 'filter.ids[1]',
  });
});
