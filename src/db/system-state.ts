/**
 * What the metrics' database-wide gauges show (src/observability/collectors.ts): enabled components
 * grouped by status, phase and failure reason with the oldest unfinished one per status (through the
 * partial index on enabled components), the number of components (primary key, index only), sessions
 * by status, and pg-boss's waiting jobs per queue (its partial index job_i5 on (name, start_after)
 * where state < 'active').
 */
import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { getOptions } from './options.ts';

export interface SystemState {
  /** Enabled components by status and phase, and the disabled ones as status `disabled`. */
  components: { status: string; phase: string; count: number }[];
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

export async function readSystemState(db: Db): Promise<SystemState> {
  const [c, total, s, j, options] = await Promise.all([
    // Enabled rows only, found through the partial index components_enabled_status_idx: as cheap as the
    // work in flight (a few rows between sessions, every row during a full-machine reboot).
    db.execute<{
      status: string;
      phase: string;
      reason: string;
      count: number;
      age: number | null;
    }>(sql`select status, phase, case when status = 'failed' then failure_reason else '' end as reason,
        count(*)::int as count,
        extract(epoch from now() - min(coalesce(desired_updated_at, last_action_at, updated_at))
          filter (where status not in ('stable', 'failed')))::float8 as age
      from components where enabled group by 1, 2, 3`),
    // Every row, as an index-only scan of the primary key (the disabled count is the difference).
    db.execute<{ n: number }>(sql`select count(*)::int as n from components`),
    db.execute<{ status: string; paused: boolean; count: number }>(
      sql`select status, paused, count(*)::int as count from sessions group by 1, 2`,
    ),
    db
      .execute<{ queue: string; due: number; deferred: number; oldest: number }>(sql`select name as queue,
        count(*) filter (where start_after <= now())::int as due,
        count(*) filter (where start_after > now())::int as deferred,
        coalesce(extract(epoch from now() - min(start_after) filter (where start_after <= now())), 0)::float8 as oldest
      from ${sql.raw(BOSS_SCHEMA)}.job where state < 'active' group by name`)
      // Before pg-boss has made its schema (a fresh database), there are no queues to show.
      .catch(() => ({ rows: [] as { queue: string; due: number; deferred: number; oldest: number }[] })),
    getOptions(db),
  ]);
  const components = new Map<string, SystemState['components'][number]>();
  const failed = new Map<string, number>();
  const pending = new Map<string, number>();
  let enabled = 0;
  for (const r of c.rows) {
    enabled += r.count;
    const key = `${r.status}|${r.phase}`;
    const row = components.get(key) ?? { status: r.status, phase: r.phase, count: 0 };
    row.count += r.count;
    components.set(key, row);
    if (r.status === 'failed') failed.set(r.reason, (failed.get(r.reason) ?? 0) + r.count);
    if (r.age !== null) pending.set(r.status, Math.max(pending.get(r.status) ?? 0, Math.max(0, r.age)));
  }
  return {
    components: [...components.values(), { status: 'disabled', phase: '', count: Math.max(0, total.rows[0]!.n - enabled) }],
    failed: [...failed].map(([reason, count]) => ({ reason, count })),
    sessions: s.rows.map((r) => ({ status: r.status, paused: r.paused, count: r.count })),
    pending: [...pending].map(([status, ageSeconds]) => ({ status, ageSeconds })),
    timeoutSeconds: options.max_power_off_wait_time + options.max_power_on_wait_time + options.max_boot_wait_time,
    queues: j.rows.map((r) => ({ queue: r.queue, due: r.due, deferred: r.deferred, oldestDueSeconds: r.oldest })),
  };
}
