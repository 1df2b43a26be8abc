/**
 * A failed node's console beside its failure: Component.consoleTail over the real API, for every
 * component of an answer (one statement for all of them, src/db/consoles.ts consoleEnds): the newest
 * attempt's last lines only, a long attempt cut at a line, nothing kept as [], viewers refused as
 * nodeConsole refuses them (null), and a bad line count a typed error naming `lines`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, errorOf, type Harness } from './api-harness.ts';
import { appendConsole } from '../../src/db/consoles.ts';

let h: Harness;
const PANIC = 'x3100c0s0b0n0';
const LONG = 'x3100c0s1b0n0';
const SILENT = 'x3100c0s2b0n0';
/** A slow console: one line a chunk (what a capture round writes while dracut waits). */
const SLOW = 'x3100c0s3b0n0';

const QUERY = `query($l: Int) { components(filter: { ids: ["${PANIC}", "${LONG}", "${SILENT}", "${SLOW}"] }) {
  nodes { id failureReason consoleTail(lines: $l) } } }`;

beforeAll(async () => {
  h = await startHarness();
  for (const [i, id] of [PANIC, LONG, SILENT, SLOW].entries()) {
    await h.db.pool.query('insert into node_inventory (id, mac) values ($1, $2)', [id, `52:54:00:00:0b:0${i}`]);
    await h.db.pool.query(
      `insert into components (id, enabled, status_override, failure_reason, error) values ($1, false, 'failed', 'boot_never_reported', 'did not report')`,
      [id],
    );
  }
  // PANIC: an older attempt, then its last power-on's attempt ending in a kernel panic.
  await appendConsole(h.db.db, PANIC, 'old boot line 1\r\nold boot line 2\r\n', 262_144);
  await h.db.pool.query(`update node_inventory set boot_set_at = now() - interval '1 minute' where id = $1`, [PANIC]);
  await appendConsole(h.db.db, PANIC, '[    0.000000] Linux version 6.1.0\r\n', 262_144);
  await appendConsole(h.db.db, PANIC, '[   42.100000] Kernel panic - not syncing: VFS: Unable to mount root fs\r\n', 262_144);
  // LONG: 2,000 numbered lines in 40 chunks (about 40 KiB), more than the 16 KiB end that is read.
  for (let c = 0; c < 40; c++)
    await appendConsole(
      h.db.db,
      LONG,
      Array.from({ length: 50 }, (_, i) => `line ${String(c * 50 + i).padStart(4, '0')} ${'.'.repeat(10)}\n`).join(''),
      262_144,
    );
  for (let i = 0; i < 300; i++)
    await appendConsole(h.db.db, SLOW, `dracut-initqueue[312]: Warning: still waiting ${String(i).padStart(3, '0')}\r\n`, 262_144);
  await h.db.db.execute(sql`analyze console_chunks`);
});

afterAll(async () => {
  await h?.close();
});

describe('Component.consoleTail', () => {
  test("each failed node's newest attempt's last lines, in one answer", async () => {
    const nodes = (await h.ok(QUERY, { l: 3 })).components.nodes as { id: string; consoleTail: string[] | null }[];
    const byId = Object.fromEntries(nodes.map((n) => [n.id, n.consoleTail]));
    expect(byId[PANIC]).toEqual([
      '[    0.000000] Linux version 6.1.0',
      '[   42.100000] Kernel panic - not syncing: VFS: Unable to mount root fs',
    ]);
    expect(byId[LONG]).toEqual(['line 1997 ..........', 'line 1998 ..........', 'line 1999 ..........']);
    expect(byId[SILENT]).toEqual([]);
  });

  test('the default is 5 lines; 100 lines of a long attempt are whole lines from its end', async () => {
    const five = (await h.ok(QUERY)).components.nodes.find((n: { id: string }) => n.id === LONG).consoleTail;
    expect(five).toHaveLength(5);
    const nodes = (await h.ok(QUERY, { l: 100 })).components.nodes as { id: string; consoleTail: string[] }[];
    const hundred = nodes.find((n) => n.id === LONG)!.consoleTail;
    expect(hundred).toEqual(Array.from({ length: 100 }, (_, i) => `line ${1900 + i} ..........`));
    // 300 chunks of a line each: the last 100 lines, whole, however many chunks they take.
    expect(nodes.find((n) => n.id === SLOW)!.consoleTail).toEqual(
      Array.from({ length: 100 }, (_, i) => `dracut-initqueue[312]: Warning: still waiting ${200 + i}`),
    );
  });

  test("viewers get null (a console can hold secrets) until consoleViewers is on; a bad count names 'lines'", async () => {
    const viewer = h.auth.bearer(await h.auth.token('viewer'));
    const refused = await h.gql(QUERY, { l: 2 }, viewer);
    expect(refused.errors).toBeUndefined();
    for (const n of refused.data.components.nodes) expect(n.consoleTail).toBeNull();
    await h.ok('mutation { patchOptions(patch: { consoleViewers: true }) { consoleViewers } }');
    const allowed = await h.gql(QUERY, { l: 1 }, viewer);
    expect(allowed.data.components.nodes.find((n: { id: string }) => n.id === PANIC).consoleTail).toEqual([
      '[   42.100000] Kernel panic - not syncing: VFS: Unable to mount root fs',
    ]);
    await h.ok('mutation { patchOptions(patch: { consoleViewers: false }) { consoleViewers } }');

    for (const l of [0, 101]) {
      const bad = await h.gql(QUERY, { l });
      expect(errorOf(bad)).toMatchObject({ code: 'BAD_USER_INPUT' });
      expect(JSON.stringify(bad.errors)).toContain('lines');
    }
  });
});
