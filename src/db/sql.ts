/**
 * The few SQL words drizzle's query builder lacks, as fragments for its `where`, `set` and `from`.
 * Arrays travel as one parameter (`= any($1::text[])`, `unnest`), never one per element, so a statement
 * costs the same for one component as for ten thousand. PostgreSQL takes at most 65,535 parameters per
 * statement: drizzle's `inArray` (one per value) fails beyond that and is barred by biome.json; a
 * multi-row `insert(...).values(rows)` (one per value per row) goes through `insertInChunks`.
 */
import { DrizzleQueryError, getTableColumns, sql, type AnyColumn, type SQL, type Table } from 'drizzle-orm';
import pg, { type QueryResult } from 'pg';
import { PgDialect } from 'drizzle-orm/pg-core';
import { namedStatementsAllowed, type Db } from './client.ts';
import { transaction } from './tx.ts';
import { chunks } from '../domain/lists.ts';

/** `column = any($1::text[])`: one parameter however many values (drizzle's inArray makes one each). */
export function anyOf(column: AnyColumn | SQL, values: readonly string[]): SQL {
  return sql`${column} = any(${sql.param([...values])}::text[])`;
}

/**
 * Rows per statement of a multi-row INSERT: drizzle binds each value of each row, so 1,000 rows stay
 * under PostgreSQL's 65,535 parameters for any table of up to 65 columns.
 */
export const ROWS_PER_INSERT = 1000;

/**
 * Write `rows` with `write`, ROWS_PER_INSERT rows per statement, in one transaction (the caller's when
 * it is in one, db/tx.ts), so a failure leaves none of them written. Returns what each write returned,
 * in order (`.flat()` them for the rows of a `returning()`).
 */
export async function insertInChunks<T, R>(db: Db, rows: readonly T[], write: (tx: Db, rows: T[]) => Promise<R>): Promise<R[]> {
  if (rows.length === 0) return [];
  return transaction(db, async (tx) => {
    const out: R[] = [];
    for (const part of chunks(rows, ROWS_PER_INSERT)) out.push(await write(tx, part));
    return out;
  });
}

/** `{ key: excluded."column" }` for an upsert's `set`: these columns take the value of the row that conflicted. */
export function fromExcluded<T extends Table, K extends keyof T['_']['columns'] & string>(table: T, keys: readonly K[]): Record<K, SQL> {
  const columns = getTableColumns(table);
  return Object.fromEntries(keys.map((k) => [k, sql.raw(`excluded."${columns[k]!.name}"`)])) as Record<K, SQL>;
}

/** One array parameter with its SQL element type, for `unnest(...)`. */
export function arrayParam(values: readonly unknown[], type: 'text' | 'bool' | 'bigint' | 'int' | 'float8' | 'timestamptz'): SQL {
  return sql`${sql.param([...values])}::${sql.raw(type)}[]`;
}

/** `unnest(a, b, ...) as alias(col, ...)`: parallel arrays as a row source for UPDATE ... FROM. */
export function unnestAs(alias: string, columns: Record<string, SQL>): SQL {
  const names = Object.keys(columns);
  return sql`unnest(${sql.join(Object.values(columns), sql`, `)}) as ${sql.raw(alias)}(${sql.raw(names.join(', '))})`;
}

/** The row version (xmin) as text: writes that follow a read are guarded by it. */
export const rowVersion = (table: SQL | AnyColumn | unknown) => sql<string>`${table}.xmin::text`;

/** Turns drizzle's `sql` into its text and parameters, as `db.execute` does (no casing: drizzleOver sets none). */
const dialect = new PgDialect();

/**
 * The types drizzle's node-postgres driver hands over as the text PostgreSQL sent (timestamps, dates,
 * intervals and their arrays, numeric arrays) rather than as pg's parsed values: a named statement
 * sent past drizzle reads them the same way. Everything else is parsed by pg's defaults, as in drizzle.
 * test/integration/sql-named.test.ts compares both paths' rows, so a drizzle upgrade that changes its
 * list fails there.
 */
const driverTypes = new pg.TypeOverrides();
for (const oid of [
  pg.types.builtins.TIMESTAMPTZ,
  pg.types.builtins.TIMESTAMP,
  pg.types.builtins.DATE,
  pg.types.builtins.INTERVAL,
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1187, // interval[]
  1182, // date[]
])
  driverTypes.setTypeParser(oid, 'text', (text: string) => text);

/**
 * `db.execute(query)` as a named prepared statement: each connection parses and plans it once, then
 * only binds and runs it (the report batch's statement planned in 1.2 ms of its 2.3 ms for one row).
 * For the hot path's fixed statements only: the text under one name must never change (its values
 * travel as parameters, arrays as one each). The rows come as from `execute` (drizzle's driver values).
 * It is sent with node-postgres's `{ name, text, values }` form on the handle's own client, so in a
 * transaction it runs on the transaction's connection.
 */
export async function executeNamed<R extends Record<string, unknown>>(db: Db, name: string, query: SQL): Promise<QueryResult<R>> {
  const { sql: text, params } = dialect.sqlToQuery(query);
  // A transaction-mode pooler may not keep a name on the session that comes next (client.ts): there
  // the statement goes unnamed, as drizzle's own execute sends it.
  const named = namedStatementsAllowed(db.$client) ? name : undefined;
  try {
    return await db.$client.query<R>({ name: named, text, values: params, types: driverTypes });
  } catch (e) {
    // As drizzle reports a failed query (db/outage.ts reads PostgreSQL's error from its cause).
    throw new DrizzleQueryError(text, params, e instanceof Error ? e : new Error(String(e)));
  }
}
