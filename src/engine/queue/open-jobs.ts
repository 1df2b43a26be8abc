/**
 * The job queues' open jobs as the API shows them (explain, componentTimeline, sessionStatus): read
 * from pg-boss's job table, where the engine's per-component jobs live (engine/action-jobs.ts).
 * Completed jobs are not listed: what is pending, active, retrying or failed is what a node's work is now.
 */
import type { Db } from '../../db/client.ts';
import type { QueueDepth } from '../../db/system-state.ts';
import { bossDbOf, componentOpenJobs, jobTableExists, sessionOpenJobCounts, waitingJobsByQueue } from './jobs.ts';
import { ACTION_QUEUE_PREFIX } from './names.ts';

export interface ComponentJob {
  queue: string;
  /** The recorded action, or `decide` for a delayed decision (due job). */
  action: string;
  state: string;
  attempt: number | null;
  retries: number;
  retryLimit: number;
  nextRun: Date | null;
  lastError: string | null;
}

/** A node's open jobs, newest first: its own (singleton key: the id) and the delayed decisions naming it. */
export async function componentJobs(db: Db, id: string): Promise<ComponentJob[]> {
  const boss = bossDbOf(db);
  // Where pg-boss has not made its tables yet (an API started before any worker), no jobs were enqueued.
  if (!(await jobTableExists(boss))) return [];
  const rows = await componentOpenJobs(boss, ACTION_QUEUE_PREFIX, id);
  return rows.map((x) => ({
    queue: x.name.slice(ACTION_QUEUE_PREFIX.length),
    action: x.data?.due ? 'decide' : (x.data?.action ?? ''),
    state: x.state,
    attempt: x.data?.attempt ?? null,
    retries: x.retry_count,
    retryLimit: x.retry_limit,
    nextRun: x.state === 'created' || x.state === 'retry' ? x.start_after : null,
    lastError: x.output?.error ?? x.output?.reason ?? null,
  }));
}

/** A session's open jobs, counted per queue and state. */
export async function sessionJobCounts(
  db: Db,
  tenant: string,
  session: string,
): Promise<Array<{ queue: string; state: string; count: number }>> {
  const boss = bossDbOf(db);
  if (!(await jobTableExists(boss))) return [];
  const rows = await sessionOpenJobCounts(boss, ACTION_QUEUE_PREFIX, tenant, session);
  return rows.map((x) => ({ queue: x.name.slice(ACTION_QUEUE_PREFIX.length), state: x.state, count: x.count }));
}

/** Every queue's waiting jobs (for the metrics' gauges); none before pg-boss has made its schema (a fresh database). */
export async function queueDepths(db: Db): Promise<QueueDepth[]> {
  const rows = await waitingJobsByQueue(bossDbOf(db)).catch(() => []);
  return rows.map((r) => ({ queue: r.queue, due: r.due, deferred: r.deferred, oldestDueSeconds: r.oldest }));
}
