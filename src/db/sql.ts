/**
 * The few SQL words drizzle's query builder lacks, as fragments for its `where`, `set` and `from`.
 * Arrays travel as one parameter (`= any($1::text[])`, `unnest`), never one per element, so a statement
 * costs the same for one component as for ten thousand.
 */
import { sql, type AnyColumn, type SQL } from 'drizzle-orm';

/** `column = any($1::text[])`: one parameter however many values (drizzle's inArray makes one each). */
export function anyOf(column: AnyColumn | SQL, values: readonly string[]): SQL {
  return sql`${column} = any(${sql.param([...values])}::text[])`;
}

/** One array parameter with its SQL element type, for `unnest(...)`. */
export function arrayParam(values: readonly unknown[], type: 'text' | 'bool' | 'bigint' | 'int' | 'float8'): SQL {
  return sql`${sql.param([...values])}::${sql.raw(type)}[]`;
}

/** `unnest(a, b, ...) as alias(col, ...)`: parallel arrays as a row source for UPDATE ... FROM. */
export function unnestAs(alias: string, columns: Record<string, SQL>): SQL {
  const names = Object.keys(columns);
  return sql`unnest(${sql.join(Object.values(columns), sql`, `)}) as ${sql.raw(alias)}(${sql.raw(names.join(', '))})`;
}

/** The row version (xmin) as text: writes that follow a read are guarded by it. */
export const rowVersion = (table: SQL | AnyColumn | unknown) => sql<string>`${table}.xmin::text`;
