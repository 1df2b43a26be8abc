/**
 * What the metrics' database-wide gauges show (src/observability/collectors.ts), read in three
 * statements: one grouped pass over components (counts by enabled, status, phase and failure reason,
 * and the oldest unfinished node per status), sessions by status (sessions_status_idx), and pg-boss's
 * waiting jobs per queue (its partial index job_i5 on (name, start_after) where state < 'active').
 */
import type { Queryable } from '../queryable.ts';
import { loadOptions } from '../engine/options.ts';

export interface SystemState {
  components: { enabled: boolean; status: string; phase: string; count: number }[];
  failed: { reason: string; count: number }[];
  sessions: { status: string; paused: boolean; count: number }[];
  /** Enabled, non-stable statuses with their oldest node's age (seconds since its desired state was set). */
  pending: { status: string; ageSeconds: number }[];
  /** max_power_off_wait_time + max_power_on_wait_time + max_boot_wait_time. */
  timeoutSeconds: number;
  queues: { queue: string; due: number; deferred: number; oldestDueSeconds: number }[];
}

/** pg-boss's schema (startBoss keeps the default). */
const BOSS_SCHEMA = 'pgboss';

export async function readSystemState(q: Queryable): Promise<SystemState> {
  const [c, s, j, options] = await Promise.all([
    q.query(`select enabled, status, phase, case when status = 'failed' then failure_reason else '' end as reason,
        count(*)::int as count,
        extract(epoch from now() - min(coalesce(desired_updated_at, last_action_at, updated_at))
          filter (where enabled and status not in ('stable', 'failed')))::float8 as age
      from components group by 1, 2, 3, 4`),
    q.query(`select status, paused, count(*)::int as count from sessions group by 1, 2`),
    q.query(`select name as queue,
        count(*) filter (where start_after <= now())::int as due,
        count(*) filter (where start_after > now())::int as deferred,
        coalesce(extract(epoch from now() - min(start_after) filter (where start_after <= now())), 0)::float8 as oldest
      from ${BOSS_SCHEMA}.job where state < 'active' group by name`).catch(() => ({ rows: [] as any[] })),
    loadOptions(q),
  ]);
  const components = new Map<string, SystemState['components'][number]>();
  const failed = new Map<string, number>();
  const pending = new Map<string, number>();
  for (const r of c.rows) {
    const key = `${r.enabled}|${r.status}|${r.phase}`;
    const row = components.get(key) ?? { enabled: r.enabled, status: r.status, phase: r.phase, count: 0 };
    row.count += r.count;
    components.set(key, row);
    if (r.status === 'failed' && r.enabled) failed.set(r.reason, (failed.get(r.reason) ?? 0) + r.count);
    if (r.age !== null) pending.set(r.status, Math.max(pending.get(r.status) ?? 0, Math.max(0, r.age)));
  }
  return {
    components: [...components.values()],
    failed: [...failed].map(([reason, count]) => ({ reason, count })),
    sessions: s.rows.map((r) => ({ status: r.status, paused: r.paused, count: r.count })),
    pending: [...pending].map(([status, ageSeconds]) => ({ status, ageSeconds })),
    timeoutSeconds: options.max_power_off_wait_time + options.max_power_on_wait_time + options.max_boot_wait_time,
    queues: j.rows.map((r) => ({ queue: r.queue, due: r.due, deferred: r.deferred, oldestDueSeconds: r.oldest })),
  };
}
