/**
 * Console text for many nodes at once (src/db/consoles.ts appendConsoles, what the capture writes
 * each round): every node's text lands in its own current attempt, each attempt trimmed to its bound
 * oldest chunks first, a node given twice keeps its order, a node the inventory does not know writes
 * nothing, and more nodes than one statement takes are split without loss.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { appendConsole, appendConsoles, CONSOLE_NODES_PER_STATEMENT, consoleText } from '../../src/db/consoles.ts';

let db: TestDb;
const N = CONSOLE_NODES_PER_STATEMENT + 234;
const id = (i: number) => `x4000c0s${i}b0n0`;

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query(
    `insert into node_inventory (id, mac)
     select 'x4000c0s' || i || 'b0n0', '52:54:01:' || lpad(to_hex(i / 65536), 2, '0') || ':' || lpad(to_hex((i / 256) % 256), 2, '0') || ':' || lpad(to_hex(i % 256), 2, '0')
     from generate_series(0, $1 - 1) i`,
    [N],
  );
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

const rows = async (sql: string, args: unknown[] = []) => (await db.pool.query(sql, args)).rows;

describe('appendConsoles', () => {
  it(`writes ${N} nodes' text in one call, each in its own attempt, split past ${CONSOLE_NODES_PER_STATEMENT} a statement`, async () => {
    const written = await appendConsoles(
      db.db,
      Array.from({ length: N }, (_, i) => ({ node: id(i), text: `boot line of ${id(i)}\r\n` })),
      1024,
    );
    expect(written.size).toBe(N);
    const [count] = await rows('select count(*)::int as n, count(distinct node)::int as nodes from console_chunks');
    expect(count).toEqual({ n: N, nodes: N });
    for (const i of [0, CONSOLE_NODES_PER_STATEMENT - 1, CONSOLE_NODES_PER_STATEMENT, N - 1])
      expect((await consoleText(db.db, id(i)))?.text).toBe(`boot line of ${id(i)}\r\n`);
  });

  it('keeps a node given twice in the order given, skips an unknown node and empty text', async () => {
    await db.pool.query(`update node_inventory set boot_set_at = now() where id = $1`, [id(1)]);
    const written = await appendConsoles(
      db.db,
      [
        { node: id(1), text: 'first\r\n' },
        { node: 'x9999c0s0b0n0', text: 'nobody\r\n' },
        { node: id(2), text: '' },
        { node: id(1), text: 'second\r\n' },
      ],
      1024,
    );
    expect([...written]).toEqual([id(1)]);
    expect((await consoleText(db.db, id(1)))?.text).toBe('first\r\nsecond\r\n');
    expect(await rows(`select 1 from console_chunks where node = 'x9999c0s0b0n0'`)).toHaveLength(0);
  });

  it("trims each node's attempt to the bound, oldest chunks first, and only that attempt", async () => {
    await db.pool.query(`update node_inventory set boot_set_at = now() where id = any($1)`, [[id(3), id(4)]]);
    for (let k = 0; k < 5; k++)
      await appendConsoles(
        db.db,
        [
          { node: id(3), text: `${k}`.repeat(40) },
          { node: id(4), text: `${k}`.padEnd(10, '.') },
        ],
        100,
      );
    // 5 chunks of 40 bytes against 100: the newest two stay (the third would cross the bound).
    expect((await consoleText(db.db, id(3)))?.text).toBe('3'.repeat(40) + '4'.repeat(40));
    // 5 chunks of 10: all 50 bytes stay.
    expect((await consoleText(db.db, id(4)))?.text).toBe(['0', '1', '2', '3', '4'].map((k) => k.padEnd(10, '.')).join(''));
    // The earlier attempt of node 3 (before its power-on) is not trimmed by the new attempt's bound.
    const [{ n }] = await rows(`select count(*)::int as n from console_chunks where node = $1 and attempt = 'epoch'`, [id(3)]);
    expect(n).toBe(1);
  });

  it('stores a text with NUL bytes without them (PostgreSQL text refuses 0x00), and its neighbours in the same statement', async () => {
    const written = await appendConsoles(
      db.db,
      [
        { node: id(6), text: 'login:\0\0 root\r\n' },
        { node: id(7), text: 'ok\r\n' },
        { node: id(8), text: '\0\0' },
      ],
      1024,
    );
    expect([...written].sort()).toEqual([id(6), id(7)]);
    // Each already holds its line from the first test, in the same (epoch) attempt.
    expect((await consoleText(db.db, id(6)))?.text).toBe(`boot line of ${id(6)}\r\nlogin: root\r\n`);
    expect((await consoleText(db.db, id(7)))?.text).toBe(`boot line of ${id(7)}\r\nok\r\n`);
  });

  it('a text longer than the bound keeps its last bytes; appendConsole is the one-node case', async () => {
    expect(await appendConsole(db.db, id(5), `${'a'.repeat(50)}${'z'.repeat(20)}`, 20)).toBe(true);
    expect((await consoleText(db.db, id(5)))?.text).toBe('z'.repeat(20));
    expect(await appendConsole(db.db, 'x9999c0s0b0n0', 'x', 20)).toBe(false);
  });
});
