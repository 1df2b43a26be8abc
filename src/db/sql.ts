/**
 * The few SQL words drizzle's query builder lacks, as fragments for its `where`, `set` and `from`.
 * Arrays travel as one parameter (`= any($1::text[])`, `unnest`), never one per element, so a statement
 * costs the same for one component as for ten thousand. PostgreSQL takes at most 65,535 parameters per
 * statement: drizzle's `inArray` (one per value) fails beyond that and is barred by biome.json; a
 * multi-row `insert(...).values(rows)` (one per value per row) goes through `insertInChunks`.
 */
import { getTableColumns, sql, type AnyColumn, type SQL, type Table } from 'drizzle-orm';
import type { QueryResult } from 'pg';
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

/** What `execute` reaches through drizzle's handle (its dialect and session are public at run time, internal in its types). */
interface DrizzleInternals {
  dialect: { sqlToQuery(q: SQL): { sql: string; params: unknown[] } };
  session: {
    prepareQuery(q: { sql: string; params: unknown[] }, fields: undefined, name: string, arrayMode: false): { execute(): Promise<unknown> };
  };
}

/**
 * `db.execute(query)` as a named prepared statement: each connection parses and plans it once, then
 * only binds and runs it (the report batch's statement planned in 1.2 ms of its 2.3 ms for one row).
 * For the hot path's fixed statements only: the text under one name must never change (its values
 * travel as parameters, arrays as one each). The rows come as from `execute` (drizzle's driver values).
 */
export async function executeNamed<R extends Record<string, unknown>>(db: Db, name: string, query: SQL): Promise<QueryResult<R>> {
  // A transaction-mode pooler may not keep a name on the session that comes next (client.ts).
  if (!namedStatementsAllowed(db.$client)) return (await db.execute(query)) as unknown as QueryResult<R>;
  const d = db as unknown as DrizzleInternals;
  return (await d.session.prepareQuery(d.dialect.sqlToQuery(query), undefined, name, false).execute()) as QueryResult<R>;
}
