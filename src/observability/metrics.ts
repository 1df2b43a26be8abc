/**
 * Every series bootorch exports, in prom-client's default registry, so whichever HTTP listener serves
 * that registry (the API's /metrics, the worker's and the simulator's) shows them. Names follow the
 * Prometheus conventions (`bootorch_` prefix, base units, `_total` counters, `_seconds` durations);
 * every label value comes from a closed set (service, operation, queue, operator, action, reason,
 * status): never an xname, a session name or a message.
 *
 * The database-wide gauges (components, sessions, queues, pending work) are computed at scrape time
 * (collectors.ts); everything here is counted where it happens, per process.
 */
import { Counter, Gauge, Histogram, collectDefaultMetrics, register, type Metric } from 'prom-client';

export const metricsRegistry = register;

/** Re-use a metric when this process registered it already (tests start several servers in one process). */
export function metric<T extends Metric>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

let defaultsOn = false;
/**
 * prom-client's process and Node.js runtime metrics (CPU, memory, event-loop lag, GC, handles), once
 * per process, with a `role` label on every series so one Prometheus scraping every process can tell
 * a worker's memory from an API replica's (the dev role is all of them in one process).
 */
export function startProcessMetrics(role: 'api' | 'worker' | 'sim' | 'dev'): void {
  if (defaultsOn) return;
  defaultsOn = true;
  register.setDefaultLabels({ role });
  collectDefaultMetrics({ register });
}

/** Latency buckets (seconds) for calls to outside services: PCS answers in ms, a CFS page in seconds. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const TICK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const outsideCalls = metric('bootorch_outside_calls_total', () => new Counter({
  name: 'bootorch_outside_calls_total',
  help: 'Calls to outside services through their ports (one per port method call, the HTTP client\'s retries included), by service, operation and outcome (ok / error)',
  labelNames: ['service', 'operation', 'outcome'] as const,
}));

export const outsideCallSeconds = metric('bootorch_outside_call_duration_seconds', () => new Histogram({
  name: 'bootorch_outside_call_duration_seconds',
  help: 'Duration of calls to outside services in seconds, by service, operation and outcome',
  labelNames: ['service', 'operation', 'outcome'] as const,
  buckets: CALL_BUCKETS,
}));

export const operatorTicks = metric('bootorch_operator_ticks_total', () => new Counter({
  name: 'bootorch_operator_ticks_total',
  help: 'Operator ticks run by this process, by operator and outcome (ok / error)',
  labelNames: ['operator', 'outcome'] as const,
}));

export const operatorTickSeconds = metric('bootorch_operator_tick_duration_seconds', () => new Histogram({
  name: 'bootorch_operator_tick_duration_seconds',
  help: 'Duration of operator ticks in seconds, by operator',
  labelNames: ['operator'] as const,
  buckets: TICK_BUCKETS,
}));

export const actionsStarted = metric('bootorch_actions_started_total', () => new Counter({
  name: 'bootorch_actions_started_total',
  help: 'Component actions recorded and attempted (one per component), by action',
  labelNames: ['action'] as const,
}));

export const actionsRetried = metric('bootorch_actions_retried_total', () => new Counter({
  name: 'bootorch_actions_retried_total',
  help: 'Component actions attempted again after an earlier attempt (a subset of started), by action',
  labelNames: ['action'] as const,
}));

export const actionsSucceeded = metric('bootorch_actions_succeeded_total', () => new Counter({
  name: 'bootorch_actions_succeeded_total',
  help: 'Component actions whose outside calls succeeded, by action',
  labelNames: ['action'] as const,
}));

export const actionsFailed = metric('bootorch_actions_failed_total', () => new Counter({
  name: 'bootorch_actions_failed_total',
  help: 'Component action attempts that failed (the error is recorded on the component and retried), by action and failure reason',
  labelNames: ['action', 'reason'] as const,
}));

export const actionsExhausted = metric('bootorch_actions_exhausted_total', () => new Counter({
  name: 'bootorch_actions_exhausted_total',
  help: 'Components failed because an action ran out of attempts (the retry policy), by action and failure reason',
  labelNames: ['action', 'reason'] as const,
}));

export const jobsStarted = metric('bootorch_queue_jobs_started_total', () => new Counter({
  name: 'bootorch_queue_jobs_started_total',
  help: 'pg-boss jobs this process started, by queue',
  labelNames: ['queue'] as const,
}));

export const jobsRetried = metric('bootorch_queue_jobs_retried_total', () => new Counter({
  name: 'bootorch_queue_jobs_retried_total',
  help: 'pg-boss jobs this process started that had failed before (retry_count > 0), by queue',
  labelNames: ['queue'] as const,
}));

export const jobsCompleted = metric('bootorch_queue_jobs_completed_total', () => new Counter({
  name: 'bootorch_queue_jobs_completed_total',
  help: 'pg-boss jobs this process completed, by queue',
  labelNames: ['queue'] as const,
}));

export const jobsFailed = metric('bootorch_queue_jobs_failed_total', () => new Counter({
  name: 'bootorch_queue_jobs_failed_total',
  help: 'pg-boss jobs whose handler threw in this process (pg-boss retries or fails them), by queue',
  labelNames: ['queue'] as const,
}));

export const jobsActive = metric('bootorch_queue_jobs_active', () => new Gauge({
  name: 'bootorch_queue_jobs_active',
  help: 'pg-boss jobs this process is running now, by queue',
  labelNames: ['queue'] as const,
}));

export const jobWaitSeconds = metric('bootorch_queue_job_wait_seconds', () => new Histogram({
  name: 'bootorch_queue_job_wait_seconds',
  help: 'Time a pg-boss job waited between becoming due (created or start_after) and being started, in seconds, by queue',
  labelNames: ['queue'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
}));

export const reports = metric('bootorch_reports_total', () => new Counter({
  name: 'bootorch_reports_total',
  help: 'Node boot reports (reportBootState) received by this process, by outcome (accepted / refused) and code',
  labelNames: ['outcome', 'code'] as const,
}));

export const reportSeconds = metric('bootorch_report_duration_seconds', () => new Histogram({
  name: 'bootorch_report_duration_seconds',
  help: 'Time from a node report\'s arrival to its batched transaction\'s commit, in seconds',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
}));

export const liveSubscribers = metric('bootorch_live_subscribers', () => new Gauge({
  name: 'bootorch_live_subscribers',
  help: 'Open GraphQL subscriptions on this API process, by stream',
  labelNames: ['stream'] as const,
}));

export const liveDeliveries = metric('bootorch_live_deliveries_total', () => new Counter({
  name: 'bootorch_live_deliveries_total',
  help: 'Messages delivered to subscribers by this API process, by stream',
  labelNames: ['stream'] as const,
}));

export const simRequests = metric('bootorch_sim_requests_total', () => new Counter({
  name: 'bootorch_sim_requests_total',
  help: 'Requests the simulator answered on its service routes, by service, endpoint (route template) and HTTP code',
  labelNames: ['service', 'endpoint', 'code'] as const,
}));
