/**
 * `bootorch migrate`: bootorch's migrations and the job queue's schema and queues, then exit. A
 * deployment runs it once before the new processes start (the chart's migration job); the roles still
 * migrate at start, under the same advisory locks, and find nothing left to do.
 */
import type { Config } from './config.ts';
import { startBoss } from './engine/runtime.ts';
import { logger, openDatabase } from './roles.ts';

export async function migrate(config: Config): Promise<void> {
  const log = logger(config);
  const { conn, embedded } = await openDatabase(config, log);
  try {
    const boss = await startBoss(conn.url, log);
    await boss.stop();
    log.info('migrations applied');
  } finally {
    await conn.close();
    await embedded?.stop();
  }
}
