/** Database liveness for health checks. */
import { sql } from 'drizzle-orm';
import type { Database } from '../client.ts';

/** True when a trivial query answers within `timeoutMs`. Never throws. */
export async function databaseHealthy(db: Database, timeoutMs = 2000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
  try {
    return await Promise.race([db.execute(sql`select 1`).then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
