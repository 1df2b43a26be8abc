import type pg from 'pg';

/** Anything that runs parameterised SQL: a pg Pool, a PoolClient inside a transaction, a Client. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult<any>>;
}
