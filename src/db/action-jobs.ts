/**
 * The action jobs as the API shows them (explain, componentTimeline, sessionStatus): read from
 * pg-boss's job table, where the engine's per-component jobs live (engine/action-jobs.ts). Completed
 * jobs are not listed: what is pending, active, retrying or failed is what a node's work is now.
 */
import type { Db } from './client.ts';
import { ACTION_QUEUE_PREFIX } from '../engine/action-jobs.ts';

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

const OPEN = `state in ('created', 'retry', 'active', 'failed')`;

/**
 * Read pg-boss's job table, or nothing where pg-boss has not created it yet (an API started before
 * any worker, or a test harness without the engine): no jobs have been enqueued there.
 */
async function jobRows<T extends object>(db: Db, text: string, values: unknown[]): Promise<T[]> {
  const exists = await db.$client.query<{ t: string | null }>(`select to_regclass('pgboss.job')::text as t`);
  if (!exists.rows[0]?.t) return [];
  return (await db.$client.query<T>(text, values)).rows;
}

interface JobRow {
  name: string;
  data: { due?: boolean; action?: string; attempt?: number | null } | null;
  state: string;
  retry_count: number;
  retry_limit: number;
  start_after: Date;
  output: { error?: string; reason?: string } | null;
}

/** A node's open action jobs, newest first: its own (singleton key: the id) and the delayed decisions naming it. */
export async function componentJobs(db: Db, id: string): Promise<ComponentJob[]> {
  const rows = await jobRows<JobRow>(
    db,
    `select name, data, state::text as state, retry_count, retry_limit, start_after, output
    from pgboss.job where name like $1 and (singleton_key = $2 or (data ? 'due' and data->'ids' ? $2)) and ${OPEN}
    order by created_on desc limit 20`,
    [`${ACTION_QUEUE_PREFIX}%`, id],
  );
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

/** A session's open action jobs, counted per queue and state. */
export async function sessionJobCounts(
  db: Db,
  tenant: string,
  session: string,
): Promise<Array<{ queue: string; state: string; count: number }>> {
  const rows = await jobRows<{ name: string; state: string; count: number }>(
    db,
    `select name, state::text as state, count(*)::int as count from pgboss.job
    where name like $1 and data->>'session' = $2 and data->>'tenant' = $3 and ${OPEN}
    group by name, state order by name, state`,
    [`${ACTION_QUEUE_PREFIX}%`, session, tenant],
  );
  return rows.map((x) => ({ queue: x.name.slice(ACTION_QUEUE_PREFIX.length), state: x.state, count: x.count }));
}
