/**
 * executeNamed (db/sql.ts) sends drizzle's `sql` past drizzle as a named statement: its rows must be
 * what `db.execute` gives for the same query (drizzle's driver leaves dates, times and intervals as
 * text, and executeNamed keeps its own list of them: an upgrade that changes drizzle's fails here),
 * it must run on a transaction's own connection, go unnamed where named statements are not allowed
 * (a transaction-mode pooler), and fail as drizzle fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DrizzleQueryError, sql } from 'drizzle-orm';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { connect, type Connection } from '../../src/db/client.ts';
import { arrayParam, executeNamed } from '../../src/db/sql.ts';
import { transaction } from '../../src/db/tx.ts';

let db: TestDb;
let unnamed: Connection;
beforeAll(async () => {
  db = await freshDb();
  unnamed = connect(db.url, { max: 2, namedStatements: false });
});
afterAll(async () => {
  await unnamed?.close();
  await db?.drop();
});

/** One column of every kind drizzle's driver treats apart, and a few it parses as pg does. */
const everyType = (ids: string[]) => sql`
  select timestamptz '2026-12-03 10:11:12.345+00' as tstz, timestamp '2026-12-03 10:11:12' as ts, date '2026-12-03' as d,
    interval '1 day 02:03:04' as iv, array[1.5, 2.25]::numeric[] as nums, array[timestamp '2026-01-01 00:00:00'] as tss,
    array[timestamptz '2026-01-01 00:00:00+00'] as tstzs, array[interval '5 minutes'] as ivs, array[date '2026-01-02'] as ds,
    42::int as i, 7::bigint as big, 1.5::numeric as num, true as b, '{"a":[1]}'::jsonb as j, array['x','y'] as texts,
    ${arrayParam(ids, 'text')} as param, now() - now() as zero`;

const preparedNames = async (c: { query(q: string): Promise<{ rows: { name: string }[] }> }) =>
  (await c.query('select name from pg_prepared_statements')).rows.map((r) => r.name);

describe('executeNamed', () => {
  it("gives the rows db.execute gives, values typed as drizzle's driver types them", async () => {
    const viaDrizzle = await db.db.execute(everyType(['a', 'b']));
    const named = await executeNamed(db.db, 'bootorch_test_every_type', everyType(['a', 'b']));
    expect(named.rows).toEqual(viaDrizzle.rows);
    expect(named.rows[0]).toMatchObject({ tstz: expect.any(String), d: '2026-12-03', iv: '1 day 02:03:04', i: 42, b: true, j: { a: [1] } });
    expect(named.rowCount).toBe(1);
  });

  it("runs on a transaction's connection, prepared there under its name", async () => {
    const seen = await transaction(db.db, async (tx) => {
      const r = await executeNamed<{ v: number }>(tx, 'bootorch_test_in_tx', sql`select ${3}::int + 1 as v`);
      expect(r.rows).toEqual([{ v: 4 }]);
      if (tx.$client === db.pool) throw new Error('the transaction handle is the pool');
      return preparedNames(tx.$client);
    });
    expect(seen).toContain('bootorch_test_in_tx');
  });

  it('goes unnamed where named statements are not allowed (BOOTORCH_NAMED_STATEMENTS=false)', async () => {
    const seen = await transaction(unnamed.db, async (tx) => {
      const r = await executeNamed<{ v: number }>(tx, 'bootorch_test_unnamed', sql`select ${5}::int as v`);
      expect(r.rows).toEqual([{ v: 5 }]);
      return preparedNames(tx.$client);
    });
    expect(seen).not.toContain('bootorch_test_unnamed');
  });

  it("fails as db.execute fails: a DrizzleQueryError with PostgreSQL's error as its cause", async () => {
    const bad = () => sql`select 1 / ${0}::int as v`;
    const viaDrizzle = await db.db.execute(bad()).catch((e: unknown) => e);
    const named = await executeNamed(db.db, 'bootorch_test_fails', bad()).catch((e: unknown) => e);
    expect(viaDrizzle).toBeInstanceOf(DrizzleQueryError);
    expect(named).toBeInstanceOf(DrizzleQueryError);
    expect((named as Error).message).toBe((viaDrizzle as Error).message);
    expect((named as DrizzleQueryError).cause).toMatchObject({ code: '22012' });
  });
});
