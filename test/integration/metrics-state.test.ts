/**
 * The database-wide gauges, computed at scrape time on real PostgreSQL: components by status and
 * phase, failed by reason, sessions by status, the oldest pending work, pg-boss's queue depth and
 * wait; jobs counted where pg-boss runs them; reports counted and traced. And the cost of the scrape
 * at 100,000 components (printed; must stay well under a scrape interval).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { local, samples, value } from '../helpers/metrics.ts';
import { FAILURE_REASONS } from '../../src/domain/failures.ts';
import { percentile } from '../helpers/processes.ts';
import { collectSystemState, type StateCollector } from '../../src/observability/collectors.ts';
import { EngineHeartbeat } from '../../src/engine/heartbeat.ts';
import { readSystemState } from '../../src/db/system-state.ts';
import { startBoss, type BossHandle } from '../../src/engine/runtime.ts';
import { work } from '../../src/engine/queue/work.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { observeReports } from '../../src/observability/reports.ts';
import { startTracing, type Tracing } from '../../src/observability/tracing.ts';

const log = pino({ level: 'silent' });
const exporter = new InMemorySpanExporter();
let tracing: Tracing | undefined;
let db: TestDb;
let state: StateCollector;
let boss: BossHandle;

beforeAll(async () => {
  tracing = startTracing('test', { exporter });
  db = await freshDb();
  state = collectSystemState(db.db, { minIntervalMs: 0 });
  boss = await startBoss(db.url, log);
});
afterAll(async () => {
  state?.stop();
  await boss?.stop();
  await db?.drop();
  await tracing?.shutdown();
});

describe('state gauges', () => {
  it('count components by enabled, status and phase, failed by reason, sessions by status, and age the oldest pending work', async () => {
    await db.pool.query(`insert into options (id, data) values (1, $1)`, [
      JSON.stringify({ max_power_off_wait_time: 10, max_power_on_wait_time: 20, max_boot_wait_time: 30 }),
    ]);
    await db.pool.query(`insert into components (id, enabled, phase, last_action, desired_updated_at)
      select 'x1000c0s' || i || 'b0n0', true, 'powering_off', '', now() - interval '90 seconds' from generate_series(0, 2) i`);
    await db.pool.query(`insert into components (id, enabled, phase, status_override, failure_reason)
      values ('x1000c1s0b0n0', true, 'powering_on', 'failed', 'power_on_timeout'), ('x1000c1s1b0n0', false, '', '', '')`);
    await db.pool.query(`insert into sessions (name, operation, template_name, status) values ('a', 'reboot', 't', 'running'),
      ('b', 'boot', 't', 'complete'), ('c', 'boot', 't', 'complete')`);
    const text = await local();
    expect(value(text, 'bootorch_components', { status: 'power_off_pending', phase: 'powering_off' })).toBe(3);
    expect(value(text, 'bootorch_components', { status: 'failed', phase: 'powering_on' })).toBe(1);
    expect(value(text, 'bootorch_components', { status: 'disabled', phase: '' })).toBe(1);
    expect(value(text, 'bootorch_components')).toBe(5);
    expect(value(text, 'bootorch_components_failed', { reason: 'power_on_timeout' })).toBe(1);
    expect(value(text, 'bootorch_sessions', { status: 'complete' })).toBe(2);
    expect(value(text, 'bootorch_sessions', { status: 'running', paused: 'false' })).toBe(1);
    const age = value(text, 'bootorch_work_oldest_pending_seconds', { status: 'power_off_pending' });
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(600);
    expect(value(text, 'bootorch_work_timeout_seconds')).toBe(60);
    await db.pool.query(`update components set enabled = false, phase = '' where phase = 'powering_off'`);
    expect(value(await local(), 'bootorch_work_oldest_pending_seconds', { status: 'power_off_pending' })).toBe(0);
  });

  it('count failed nodes whether enabled or not, ended sessions by result, the engine processes alive and the quietest running session', async () => {
    // A failed node is disabled: it counted nowhere before (the failure panel was empty after 97 failures).
    await db.pool.query(`insert into components (id, enabled, status_override, failure_reason, session) values
      ('x1001c0s0b0n0', false, 'failed', 'bmc_unreachable', 'f'), ('x1001c0s1b0n0', false, 'failed', 'bmc_unreachable', 'f'),
      ('x1001c0s2b0n0', true, 'failed', 'boot_never_reported', 'f')`);
    await db.pool.query(`insert into sessions (name, operation, template_name, status, aborted, error, paused, start_time) values
      ('ok', 'boot', 't', 'complete', false, null, false, now()), ('f', 'boot', 't', 'complete', false, null, false, now()),
      ('ab', 'boot', 't', 'complete', true, null, false, now()), ('er', 'boot', 't', 'complete', false, 'no node matched', false, now()),
      ('quiet', 'boot', 't', 'running', false, null, false, now() - interval '2 hours'),
      ('paused', 'boot', 't', 'running', false, null, true, now() - interval '5 hours')`);
    await db.pool.query(
      `insert into session_status_snapshots (name, data) values ('f', '{"percentFailed": 60}'), ('ok', '{"percentFailed": 0}')`,
    );
    await db.pool.query(`insert into component_events (component_id, session, kind, actor, at) values
      ('x1001c0s0b0n0', 'quiet', 'transition', 't', now() - interval '20 minutes')`);
    let text = await local();
    expect(value(text, 'bootorch_components_failed', { reason: 'bmc_unreachable' })).toBe(2);
    expect(value(text, 'bootorch_components_failed', { reason: 'boot_never_reported' })).toBe(1);
    // Every other reason is there at 0 (a reason's first failures are then a rise Prometheus can see).
    const reasons = samples(text, 'bootorch_components_failed');
    expect(reasons.map((r) => r.labels.reason).sort()).toEqual([...Object.keys(FAILURE_REASONS), 'unknown'].sort());
    expect(reasons.filter((r) => r.value > 0).length).toBe(3);
    expect(value(text, 'bootorch_components_failed')).toBe(4);
    expect(value(text, 'bootorch_sessions_ended', { result: 'complete_with_failures' })).toBe(1);
    expect(value(text, 'bootorch_sessions_ended', { result: 'aborted' })).toBe(1);
    expect(value(text, 'bootorch_sessions_ended', { result: 'failed' })).toBe(1);
    // 'b' and 'c' of the first test are complete without a snapshot: complete.
    expect(value(text, 'bootorch_sessions_ended', { result: 'complete' })).toBe(3);
    const idle = value(text, 'bootorch_session_idle_seconds');
    expect(idle).toBeGreaterThanOrEqual(20 * 60);
    expect(idle).toBeLessThan(21 * 60);
    // No engine has beaten: none alive, and the age is infinite (the alert fires on "< 1 alive").
    expect(value(text, 'bootorch_engine_processes')).toBe(0);
    expect(value(text, 'bootorch_engine_heartbeat_age_seconds')).toBe(Number.POSITIVE_INFINITY);
    const heartbeat = new EngineHeartbeat(db.db, 'worker', log, 60_000);
    await heartbeat.start();
    text = await local();
    expect(value(text, 'bootorch_engine_processes')).toBe(1);
    expect(value(text, 'bootorch_engine_heartbeat_age_seconds')).toBeLessThan(5);
    await heartbeat.stop();
    expect(value(await local(), 'bootorch_engine_processes')).toBe(0);
    // A process that died (no stop) stops counting once its beat is older than the alive window.
    await new EngineHeartbeat(db.db, 'worker', log, 60_000).start();
    await db.pool.query(`update engine_processes set beat_at = now() - interval '16 seconds'`);
    text = await local();
    expect(value(text, 'bootorch_engine_processes')).toBe(0);
    expect(value(text, 'bootorch_engine_heartbeat_age_seconds')).toBeGreaterThanOrEqual(16);
    await db.pool.query(`delete from sessions where name in ('ok', 'f', 'ab', 'er', 'quiet', 'paused')`);
    await db.pool.query(`delete from components where id like 'x1001%'`);
    await db.pool.query('delete from component_events');
  });

  it('show pg-boss queue depth and wait, and count jobs started, completed, failed and retried where they run', async () => {
    const q = 'obs-test';
    await boss.boss.createQueue(q, { name: q, retryLimit: 1, retryDelay: 0 });
    await boss.boss.send(q, { fail: true });
    await boss.boss.send(q, { fail: false });
    await boss.boss.send(q, { later: true }, { startAfter: 3600 });
    const before = await local();
    expect(value(before, 'bootorch_queue_jobs', { queue: q, state: 'due' })).toBe(2);
    expect(value(before, 'bootorch_queue_jobs', { queue: q, state: 'deferred' })).toBe(1);
    expect(value(before, 'bootorch_queue_oldest_due_seconds', { queue: q })).toBeGreaterThanOrEqual(0);
    let runs = 0;
    const done = new Promise<void>((resolve) => {
      void work<{ fail?: boolean }>(boss.boss, q, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
        runs++;
        if (runs >= 3) resolve();
        if (job!.data.fail) throw new Error('fails on purpose');
      });
    });
    await done; // the failing job twice (its retry), the other once
    await boss.boss.offWork(q);
    const after = await local();
    expect(value(after, 'bootorch_queue_jobs_started_total', { queue: q })).toBe(3);
    expect(value(after, 'bootorch_queue_jobs_failed_total', { queue: q })).toBe(2);
    expect(value(after, 'bootorch_queue_jobs_retried_total', { queue: q })).toBe(1);
    expect(value(after, 'bootorch_queue_jobs_completed_total', { queue: q })).toBe(1);
    expect(value(after, 'bootorch_queue_jobs_active', { queue: q })).toBe(0);
    expect(value(after, 'bootorch_queue_job_wait_seconds_count', { queue: q })).toBe(3);
    expect(value(after, 'bootorch_queue_jobs', { queue: q, state: 'due' })).toBe(0);
  });

  it('count reports accepted and refused, each in a report span', async () => {
    await db.pool.query(`insert into components (id) values ('x3000c0s1b0n0')`);
    const reports = observeReports(createReportBatcher(db.db, boss.scheduler));
    exporter.reset();
    expect((await reports.report({ id: 'x3000c0s1b0n0', token: 'unknown', actor: 't' })).ok).toBe(true);
    expect((await reports.report({ id: 'x3000c0s9b0n0', token: 'unknown', actor: 't' })).ok).toBe(false);
    const text = await local();
    expect(value(text, 'bootorch_reports_total', { outcome: 'accepted' })).toBe(1);
    expect(value(text, 'bootorch_reports_total', { outcome: 'refused', code: 'NOT_FOUND' })).toBe(1);
    expect(value(text, 'bootorch_report_duration_seconds_count')).toBe(2);
    expect(
      exporter
        .getFinishedSpans()
        .filter((s) => s.name === 'report')
        .map((s) => s.attributes['bootorch.outcome']),
    ).toEqual(['accepted', 'NOT_FOUND']);
  });

  it('cost little to scrape at 100,000 components', async () => {
    await db.pool.query(`insert into components (id, enabled, phase, last_action, desired_updated_at)
      select 'x' || (2000 + i / 256) || 'c' || (i % 256 / 32) || 's' || (i % 32 / 4) || 'b' || (i % 4 / 2) || 'n' || (i % 2),
        i % 3 = 0, case i % 4 when 0 then 'powering_on' when 1 then 'powering_off' when 2 then 'configuring' else '' end,
        case i % 8 when 0 then 'powering_on' else '' end, now() - (i % 600) * interval '1 second'
      from generate_series(0, 99993) i`);
    await db.pool.query('vacuum analyze components');
    const total = Number((await db.pool.query('select count(*) from components')).rows[0].count);
    expect(total).toBe(100_000);
    // Three shapes: a third of the machine in flight, all of it, then none (between sessions, the usual state).
    const measure = async (what: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        const s = await readSystemState(db.db);
        ms.push(performance.now() - t);
        expect(s.components.reduce((n, r) => n + r.count, 0)).toBe(total);
      }
      process.stdout.write(
        `\nstate gauges at ${total} components, ${what}: p50 ${percentile(ms, 50).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms (7 reads)\n`,
      );
      return percentile(ms, 50);
    };
    expect(await measure('a third enabled')).toBeLessThan(1000);
    await db.pool.query(`update components set enabled = true, phase = 'powering_off'`);
    await db.pool.query('vacuum analyze components');
    expect(await measure('all in flight (a full-machine reboot)')).toBeLessThan(1000);
    await db.pool.query(`update components set enabled = false where enabled`);
    await db.pool.query('vacuum analyze components');
    expect(await measure('none enabled')).toBeLessThan(1000);
  });
});
