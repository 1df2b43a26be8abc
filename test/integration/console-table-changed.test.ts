/**
 * The node table's last-change filter: `components(filter: { changedWithinSeconds, unchangedForSeconds })`
 * counts back from the database's now(), combines with the other filters, the sort orders and their
 * paging, and refuses a bound out of range, or a window with no time in it, naming the field.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';

let h: Harness;

/** Each node's age (seconds since its last change) and whether it failed. */
const NODES: [string, number, boolean][] = [
  ['x1000c0s0b0n0', 10, false],
  ['x1000c0s0b0n1', 240, true],
  ['x1000c0s1b0n0', 1_800, false],
  ['x1000c0s1b0n1', 7_200, true],
  ['x1000c0s2b0n0', 2 * 86_400, false],
];

const LIST = `query($f: ComponentFilter, $first: Int, $after: String, $o: ComponentOrder, $d: Boolean) {
  components(filter: $f, first: $first, after: $after, orderBy: $o, descending: $d) {
    nodes { id } pageInfo { hasNextPage endCursor } totalCount } }`;
const ids = async (f: Record<string, unknown>) => (await h.ok(LIST, { f })).components.nodes.map((n: { id: string }) => n.id) as string[];

beforeAll(async () => {
  h = await startHarness();
  for (const [id, age, failed] of NODES)
    await h.db.db.execute(sql`
      insert into components (id, enabled, status_override, failure_reason, updated_at)
      values (${id}, ${!failed}, ${failed ? 'failed' : ''}, ${failed ? 'power_on_timeout' : ''}, now() - make_interval(secs => ${age}))`);
});
afterAll(async () => {
  await h?.close();
});

describe('the last-change bounds select by age', () => {
  test.each([
    ['changed in the last 5 min', { changedWithinSeconds: 300 }, ['x1000c0s0b0n0', 'x1000c0s0b0n1']],
    ['changed in the last hour', { changedWithinSeconds: 3_600 }, ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0']],
    ['not changed for an hour', { unchangedForSeconds: 3_600 }, ['x1000c0s1b0n1', 'x1000c0s2b0n0']],
    ['changed 1 h to 24 h ago', { changedWithinSeconds: 86_400, unchangedForSeconds: 3_600 }, ['x1000c0s1b0n1']],
    ['failed and not changed for an hour', { unchangedForSeconds: 3_600, status: ['FAILED'] }, ['x1000c0s1b0n1']],
    ['failed and changed in the last 5 min', { changedWithinSeconds: 300, status: ['FAILED'] }, ['x1000c0s0b0n1']],
  ])('%s', async (_what, filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
    expect((await h.ok(LIST, { f: filter })).components.totalCount).toBe(expected.length);
  });

  test('with the last-change order, newest first, a page at a time', async () => {
    const f = { changedWithinSeconds: 86_400 };
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: { nodes: { id: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } } = (
        await h.ok(LIST, { f, first: 1, after, o: 'LAST_CHANGE', d: true })
      ).components;
      seen.push(...page.nodes.map((n) => n.id));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x1000c0s1b0n1']);
  });
});

test.each([
  [{ changedWithinSeconds: 0 }, 'filter.changedWithinSeconds', 'must be at least 1'],
  [{ unchangedForSeconds: -60 }, 'filter.unchangedForSeconds', 'must be at least 1'],
  [{ changedWithinSeconds: 315_360_001 }, 'filter.changedWithinSeconds', 'must be at most 315360000'],
  [{ changedWithinSeconds: 3_600, unchangedForSeconds: 3_600 }, 'filter.unchangedForSeconds', 'must be less than changedWithinSeconds'],
])('%j is BAD_USER_INPUT naming %s', async (f, field, message) => {
  const r = await h.gql(LIST, { f });
  expect(r.data).toBeNull();
  expect(r.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  expect(r.errors![0]!.message).toContain(message);
});
