/**
 * What the metrics' database-wide gauges show (src/observability/collectors.ts): enabled components
 * grouped by status and phase with the oldest unfinished one per status (through the partial index on
 * enabled components), the number of components (primary key, index only), failed components by
 * reason whether enabled or not (a partial index), sessions by status and ended sessions by result,
 * the engine processes' heartbeats, the quietest running session, the quarantined nodes (through the
 * partial index on failed_sessions > 0), and, from the caller, the job
 * queues' depths (pg-boss's tables are read in src/engine/queue/ only: engine/queue/open-jobs.ts queueDepths).
 */
import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { getOptions } from './options.ts';
import { engineLiveness, type EngineLiveness } from './engine-processes.ts';
import { sessionResult, type EndedResult } from '../domain/session-result.ts';

export interface SystemState {
  /** Enabled components by status and phase, and the disabled ones as status `disabled`. */
  components: { status: string; phase: string; count: number }[];
  /** Components in status failed by reason, enabled or not (a failed node is disabled). */
  failed: { reason: string; count: number }[];
  /** Components quarantined (quarantine_after_failed_sessions sessions failed in a row or more; 0 when the option is 0). */
  quarantined: number;
  /** Ended sessions (status complete) by result. */
  ended: { result: EndedResult; count: number }[];
  /** Engine processes alive, and the age of the newest heartbeat (null: none ever beat). */
  engine: EngineLiveness;
  /** Seconds since the newest event of the running, unpaused session that has been quiet longest (0 when none runs). */
  sessionIdleSeconds: number;
  sessions: { status: string; paused: boolean; count: number }[];
  /** Enabled, non-stable statuses with their oldest node's age (seconds since its desired state was set). */
  pending: { status: string; ageSeconds: number }[];
  /** max_power_off_wait_time + max_power_on_wait_time + max_boot_wait_time. */
  timeoutSeconds: number;
  queues: QueueDepth[];
}

/** A job queue's waiting jobs: due now, deferred (start_after later), and how long the oldest due one has waited. */
export interface QueueDepth {
  queue: string;
  due: number;
  deferred: number;
  oldestDueSeconds: number;
}

export async function readSystemState(
  db: Db,
  o: { aliveSeconds: number; queues?: () => Promise<QueueDepth[]> } = { aliveSeconds: 15 },
): Promise<SystemState> {
  const [c, total, s, j, options, failed, ended, engine, idle, runs] = await Promise.all([
    // Enabled rows only, found through the partial index components_enabled_status_idx: as cheap as the
    // work in flight (a few rows between sessions, every row during a full-machine reboot).
    db.execute<{
      status: string;
      phase: string;
      count: number;
      age: number | null;
    }>(sql`select status, phase, count(*)::int as count,
        extract(epoch from now() - min(coalesce(desired_updated_at, last_action_at, updated_at))
          filter (where status not in ('stable', 'failed')))::float8 as age
      from components where enabled group by 1, 2`),
    // Every row, as an index-only scan of the primary key (the disabled count is the difference).
    db.execute<{ n: number }>(sql`select count(*)::int as n from components`),
    db.execute<{ status: string; paused: boolean; count: number }>(
      sql`select status, paused, count(*)::int as count from sessions group by 1, 2`,
    ),
    o.queues?.() ?? [],
    getOptions(db),
    // Through the partial index components_failed_reason_idx: as cheap as the failed nodes are few.
    db.execute<{ reason: string; count: number }>(
      sql`select failure_reason as reason, count(*)::int as count from components where status = 'failed' group by 1`,
    ),
    // The facts sessionResult needs, grouped: a session's failed nodes are in its saved snapshot.
    db.execute<{ aborted: boolean; has_error: boolean; with_failures: boolean; count: number }>(sql`select s.aborted,
        s.error is not null as has_error,
        coalesce((ss.data->>'percentFailed')::float8, 0) > 0 as with_failures,
        count(*)::int as count
      from sessions s left join session_status_snapshots ss on ss.tenant_key = s.tenant_key and ss.name = s.name
      where s.status = 'complete' group by 1, 2, 3`),
    engineLiveness(db, o.aliveSeconds),
    // The newest event of each running session, through component_events_session_idx (session, id).
    db.execute<{ idle: number | null }>(sql`select max(extract(epoch from now() - coalesce(
        (select e.at from component_events e where e.session = s.name and e.session_tenant = s.tenant_key order by e.id desc limit 1),
        s.start_time)))::float8 as idle
      from sessions s where s.status = 'running' and not s.paused`),
    // Runs of failed sessions by length, through components_failed_sessions_idx (domain/quarantine.ts).
    db.execute<{ n: number; count: number }>(
      sql`select failed_sessions as n, count(*)::int as count from components where failed_sessions > 0 group by 1`,
    ),
  ]);
  const k = options.quarantine_after_failed_sessions;
  const components = new Map<string, SystemState['components'][number]>();
  const pending = new Map<string, number>();
  let enabled = 0;
  for (const r of c.rows) {
    enabled += r.count;
    const key = `${r.status}|${r.phase}`;
    const row = components.get(key) ?? { status: r.status, phase: r.phase, count: 0 };
    row.count += r.count;
    components.set(key, row);
    if (r.age !== null) pending.set(r.status, Math.max(pending.get(r.status) ?? 0, Math.max(0, r.age)));
  }
  return {
    components: [...components.values(), { status: 'disabled', phase: '', count: Math.max(0, total.rows[0]!.n - enabled) }],
    failed: failed.rows.map((r) => ({ reason: r.reason, count: r.count })),
    quarantined: k > 0 ? runs.rows.filter((r) => r.n >= k).reduce((a, r) => a + r.count, 0) : 0,
    ended: endedByResult(ended.rows),
    engine,
    sessionIdleSeconds: Math.max(0, idle.rows[0]?.idle ?? 0),
    sessions: s.rows.map((r) => ({ status: r.status, paused: r.paused, count: r.count })),
    pending: [...pending].map(([status, ageSeconds]) => ({ status, ageSeconds })),
    timeoutSeconds: options.max_power_off_wait_time + options.max_power_on_wait_time + options.max_boot_wait_time,
    queues: j,
  };
}

function endedByResult(rows: { aborted: boolean; has_error: boolean; with_failures: boolean; count: number }[]): SystemState['ended'] {
  const by = new Map<EndedResult, number>();
  for (const r of rows) {
    const result = sessionResult({
      status: 'complete',
      paused: false,
      aborted: r.aborted,
      hasError: r.has_error,
      failedNodes: r.with_failures ? 1 : 0,
    }) as EndedResult;
    by.set(result, (by.get(result) ?? 0) + r.count);
  }
  return [...by].map(([result, count]) => ({ result, count }));
}
