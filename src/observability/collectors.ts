/**
 * The system's state as gauges, computed at scrape time from the database: components by status and
 * phase, failed components by reason, quarantined components, sessions by status, the age of the oldest pending work, and
 * pg-boss's queues (depth and the oldest due job's wait). One round of grouped queries per scrape, at
 * most once every `minIntervalMs` however many scrapers ask (a burst of scrapes shares one read).
 *
 * These are database-wide, and every process that has the database serves them (api replicas, worker,
 * dev), so they exist when no worker runs (the engine's absence is itself a gauge); aggregate with
 * max() across processes (the dashboard and the alert rules do).
 */
import { gauge } from './metrics.ts';
import { readSystemState, type SystemState } from '../db/system-state.ts';
import { ENDED_RESULTS } from '../domain/session-result.ts';
import { FAILURE_REASONS } from '../domain/failures.ts';
import { HEARTBEAT_ALIVE_SECONDS } from '../engine/heartbeat.ts';
import { queueDepths } from '../engine/queue/open-jobs.ts';
import type { Db } from '../db/client.ts';

/** bootorch_components_failed's reasons: the closed set, and `unknown` for a failure stored without one. */
const FAILURE_REASON_LABELS = [...Object.keys(FAILURE_REASONS), 'unknown'];

/**
 * What a scrape reads, set by collectSystemState. prom-client calls each gauge's `collect` (its
 * documented option) on scrape; the first call reads, the others share that read.
 */
let collectState: (() => Promise<void>) | undefined;
const onScrape = () => collectState?.();

const components = gauge(
  'bootorch_components',
  'Components by status and phase: enabled ones (in a session\'s walk) by BOS\'s computed status and their phase, disabled ones as status="disabled"',
  ['status', 'phase'],
  onScrape,
);
const failed = gauge(
  'bootorch_components_failed',
  'Components in status failed, enabled or not (a failed node is disabled until it is cleared or booted again), by failure reason',
  ['reason'],
  onScrape,
);
const quarantined = gauge(
  'bootorch_components_quarantined',
  'Components quarantined: failed quarantine_after_failed_sessions sessions in a row or more, left out of new sessions unless named (0 while the option is 0)',
  [],
  onScrape,
);
const ended = gauge(
  'bootorch_sessions_ended',
  'Ended sessions still kept (session_cleanup deletes old ones), by result: complete, complete_with_failures, aborted, failed',
  ['result'],
  onScrape,
);
const engineAlive = gauge(
  'bootorch_engine_processes',
  'Engine processes (worker, dev) whose heartbeat is younger than 15 s: 0 means no operator or action job runs anywhere',
  [],
  onScrape,
);
const engineBeatAge = gauge(
  'bootorch_engine_heartbeat_age_seconds',
  'Seconds since the newest heartbeat of any engine process (+Inf when none has ever beaten)',
  [],
  onScrape,
);
const sessionIdle = gauge(
  'bootorch_session_idle_seconds',
  'Seconds since the newest event (transition, action, error, report) of the running, unpaused session that has been quiet longest (0 when none runs)',
  [],
  onScrape,
);
const sessions = gauge(
  'bootorch_sessions',
  'Sessions by status (pending / running / complete) and whether paused',
  ['status', 'paused'],
  onScrape,
);
const pendingAge = gauge(
  'bootorch_work_oldest_pending_seconds',
  'Age of the oldest unfinished work, by status: seconds since the desired state of the longest-waiting enabled, non-stable component was set (0 when none)',
  ['status'],
  onScrape,
);
const pendingBudget = gauge(
  'bootorch_work_timeout_seconds',
  "How long a node's walk may take before it is stuck: max_power_off_wait_time + max_power_on_wait_time + max_boot_wait_time (options)",
  [],
  onScrape,
);
const queueDepth = gauge(
  'bootorch_queue_jobs',
  'pg-boss jobs waiting (created or retry), by queue and state: due (may start now) or deferred (start_after in the future)',
  ['queue', 'state'],
  onScrape,
);
const queueWait = gauge(
  'bootorch_queue_oldest_due_seconds',
  'How long the oldest due pg-boss job of each queue has waited to be started, in seconds (0 when none)',
  ['queue'],
  onScrape,
);
const scrapeSeconds = gauge(
  'bootorch_state_scrape_duration_seconds',
  'Time the last read of the database-wide gauges took, in seconds',
  [],
);

export interface StateCollector {
  stop(): void;
}

/** Register the database-wide gauges, read from `db` on scrape. */
export function collectSystemState(db: Db, o: { minIntervalMs?: number } = {}): StateCollector {
  const minIntervalMs = o.minIntervalMs ?? 2000;
  let last: { at: number; state: Promise<SystemState | undefined> } | undefined;
  let stopped = false;
  const read = (): Promise<SystemState | undefined> => {
    if (stopped) return Promise.resolve(undefined);
    if (last && Date.now() - last.at < minIntervalMs) return last.state;
    const start = process.hrtime.bigint();
    // A scrape while the database is down reports what it can (nothing here), never an error page.
    const state = readSystemState(db, { aliveSeconds: HEARTBEAT_ALIVE_SECONDS, queues: () => queueDepths(db) }).then(
      (s) => {
        scrapeSeconds.set(Number(process.hrtime.bigint() - start) / 1e9);
        return s;
      },
      () => undefined,
    );
    last = { at: Date.now(), state };
    return state;
  };
  const setAll = async () => {
    const s = await read();
    if (!s) return;
    components.reset();
    for (const r of s.components) components.set({ status: r.status, phase: r.phase }, r.count);
    // Every reason has a series, 0 while no node failed for it: a reason's first failures are then a
    // rise of a series Prometheus already has, which delta() and the failure-spike alert see (a
    // series that appears from nothing has no earlier sample to compare with).
    failed.reset();
    for (const reason of FAILURE_REASON_LABELS) failed.set({ reason }, 0);
    for (const r of s.failed) failed.inc({ reason: r.reason || 'unknown' }, r.count);
    quarantined.set(s.quarantined);
    ended.reset();
    for (const r of ENDED_RESULTS) ended.set({ result: r }, s.ended.find((e) => e.result === r)?.count ?? 0);
    engineAlive.set(s.engine.alive);
    engineBeatAge.set(s.engine.lastBeatAgeSeconds ?? Number.POSITIVE_INFINITY);
    sessionIdle.set(s.sessionIdleSeconds);
    sessions.reset();
    for (const r of s.sessions) sessions.set({ status: r.status, paused: String(r.paused) }, r.count);
    pendingAge.reset();
    for (const r of s.pending) pendingAge.set({ status: r.status }, r.ageSeconds);
    if (s.pending.length === 0) pendingAge.set({ status: 'none' }, 0);
    pendingBudget.set(s.timeoutSeconds);
    queueDepth.reset();
    queueWait.reset();
    for (const q of s.queues) {
      queueDepth.set({ queue: q.queue, state: 'due' }, q.due);
      queueDepth.set({ queue: q.queue, state: 'deferred' }, q.deferred);
      queueWait.set({ queue: q.queue }, q.oldestDueSeconds);
    }
  };
  collectState = setAll;
  return {
    stop: () => {
      stopped = true;
      if (collectState === setAll) collectState = undefined;
    },
  };
}
