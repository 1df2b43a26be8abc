/**
 * The engine's one clock: the database's. Rows are stamped with PostgreSQL's now(); waits are measured
 * against the same clock, so skew between a worker and the database shifts no timeout. A tick reads
 * the database time once and advances it with the process's monotonic clock (no drift within a tick).
 */
import { databaseNow, type Db } from '../db/client.ts';

export type Clock = () => Date;

export async function databaseClock(db: Db): Promise<Clock> {
  const at = await databaseNow(db);
  const t0 = performance.now();
  return () => new Date(at + (performance.now() - t0));
}
