/**
 * The one place bootorch registers a pg-boss handler: pg-boss's documented `work` with the jobs'
 * metadata, the handler wrapped by observeJobs (counted and timed). No method of pg-boss is replaced.
 * (The job queues are not worked here: the engine fetches and ends their jobs itself, engine/action-jobs.ts.)
 */
import type PgBoss from 'pg-boss';
import { observeJobs } from '../../observability/engine.ts';

export function work<T extends object>(
  boss: PgBoss,
  queue: string,
  options: Omit<PgBoss.WorkOptions, 'includeMetadata'>,
  handler: (jobs: PgBoss.JobWithMetadata<T>[]) => Promise<unknown>,
): Promise<string> {
  return boss.work<T>(queue, { ...options, includeMetadata: true }, observeJobs(queue, handler));
}
