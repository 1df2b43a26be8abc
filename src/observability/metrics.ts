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

/** A counter, gauge or histogram registered once per process (names and help are the contract). */
export const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
  metric(name, () => new Counter<L>({ name, help, labelNames }));
export const gauge = <L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: (this: Gauge<L>) => void | Promise<void>,
) => metric(name, () => new Gauge<L>({ name, help, labelNames, ...(collect ? { collect } : {}) }));
export const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
  metric(name, () => new Histogram<L>({ name, help, labelNames, buckets }));

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

export const outsideCalls = counter(
  'bootorch_outside_calls_total',
  "Calls to outside services through their ports (one per port method call, the HTTP client's retries included), by service, operation and outcome (ok / error)",
  ['service', 'operation', 'outcome'],
);

export const outsideCallSeconds = histogram(
  'bootorch_outside_call_duration_seconds',
  'Duration of calls to outside services in seconds, by service, operation and outcome',
  ['service', 'operation', 'outcome'],
  CALL_BUCKETS,
);

export const operatorTicks = counter(
  'bootorch_operator_ticks_total',
  'Operator ticks run by this process, by operator and outcome (ok / error)',
  ['operator', 'outcome'],
);

export const operatorTickSeconds = histogram(
  'bootorch_operator_tick_duration_seconds',
  'Duration of operator ticks in seconds, by operator',
  ['operator'],
  TICK_BUCKETS,
);

export const statusPasses = counter(
  'bootorch_status_passes_total',
  'Status passes run by this process, by kind (full: every enabled component; transit: those waiting on PCS, CFS or a deploy agent, and those written since the previous pass began; changed: only the latter)',
  ['pass'],
);

export const statusRowsRead = counter(
  'bootorch_status_rows_read_total',
  'Components the status passes of this process read (and asked PCS and CFS about), by kind of pass',
  ['pass'],
);

export const actionsStarted = counter(
  'bootorch_actions_started_total',
  'Component actions recorded and attempted (one per component), by action',
  ['action'],
);

export const actionsRetried = counter(
  'bootorch_actions_retried_total',
  'Component actions attempted again after an earlier attempt (a subset of started), by action',
  ['action'],
);

export const actionsSucceeded = counter('bootorch_actions_succeeded_total', 'Component actions whose outside calls succeeded, by action', [
  'action',
]);

export const actionsFailed = counter(
  'bootorch_actions_failed_total',
  'Component action attempts that failed (the error is recorded on the component and retried), by action and failure reason',
  ['action', 'reason'],
);

export const actionsExhausted = counter(
  'bootorch_actions_exhausted_total',
  'Components failed because an action ran out of attempts (the retry policy), by action and failure reason',
  ['action', 'reason'],
);

export const jobsStarted = counter('bootorch_queue_jobs_started_total', 'pg-boss jobs this process started, by queue', ['queue']);

export const jobsRetried = counter(
  'bootorch_queue_jobs_retried_total',
  'pg-boss jobs this process started that had failed before (retry_count > 0), by queue',
  ['queue'],
);

export const jobsCompleted = counter('bootorch_queue_jobs_completed_total', 'pg-boss jobs this process completed, by queue', ['queue']);

export const jobsFailed = counter(
  'bootorch_queue_jobs_failed_total',
  'pg-boss jobs whose handler threw in this process (pg-boss retries or fails them), by queue',
  ['queue'],
);

export const jobsReaped = counter(
  'bootorch_queue_jobs_reaped_total',
  'pg-boss jobs this process failed because the process running them was gone (its lease lock released; engine/leases.ts), by queue',
  ['queue'],
);

export const jobsActive = gauge('bootorch_queue_jobs_active', 'pg-boss jobs this process is running now, by queue', ['queue']);

export const jobWaitSeconds = histogram(
  'bootorch_queue_job_wait_seconds',
  'Time a pg-boss job waited between becoming due (created or start_after) and being started, in seconds, by queue',
  ['queue'],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
);

export const reports = counter(
  'bootorch_reports_total',
  'Node boot reports (reportBootState) received by this process, by outcome (accepted / refused) and code',
  ['outcome', 'code'],
);

export const reportSeconds = histogram(
  'bootorch_report_duration_seconds',
  "Time from a node report's arrival to its batched transaction's commit, in seconds",
  [],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
);

export const liveSubscribers = gauge('bootorch_live_subscribers', 'Open GraphQL subscriptions on this API process, by stream', ['stream']);

export const liveDeliveries = counter(
  'bootorch_live_deliveries_total',
  'Messages delivered to subscribers by this API process, by stream',
  ['stream'],
);

export const simRequests = counter(
  'bootorch_sim_requests_total',
  'Requests the simulator answered on its service routes, by service, endpoint (route template) and HTTP code',
  ['service', 'endpoint', 'code'],
);

export const bmcCallsInFlight = gauge(
  'bootorch_bmc_calls_in_flight',
  'BMC calls this process has in flight now (bounded by BOOTORCH_BMC_CONCURRENCY)',
);

export const bmcCallsWaiting = gauge(
  'bootorch_bmc_calls_waiting',
  'BMC calls this process has waiting for a turn under BOOTORCH_BMC_CONCURRENCY now (behind the calls in flight)',
);

export const bmcTurnWaitSeconds = histogram(
  'bootorch_bmc_turn_wait_seconds',
  'Time a BMC call waited for a turn under BOOTORCH_BMC_CONCURRENCY before it was sent, in seconds',
  [],
  [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
);

export const bmcCallSeconds = histogram(
  'bootorch_bmc_call_duration_seconds',
  "Duration of BMC calls in seconds (sent to answered, the turn's wait not included), by outcome (ok / error)",
  ['outcome'],
  CALL_BUCKETS,
);

export const bmcCircuitsOpen = gauge(
  'bootorch_bmc_circuits_open',
  'BMCs whose circuit is open in this process: calls to them fail at once until a probe answers',
);

export const bmcCircuitOpens = counter(
  'bootorch_bmc_circuit_opens_total',
  'Times a BMC circuit opened in this process (failures in a row, then no calls until a probe)',
);

export const bmcCallsRefused = counter(
  'bootorch_bmc_calls_refused_total',
  'BMC calls this process failed at once because the BMC circuit was open',
);

export const bmcBusyAnswers = counter(
  'bootorch_bmc_busy_answers_total',
  'BMC answers 429 or 503 (busy): the BMC is left alone for its Retry-After',
);

export const powerDriftFound = counter(
  'bootorch_power_drift_found_total',
  'Stable nodes found with their power not as bootorch left it (on when it should be off or the other way round), by expected power',
  ['expected'],
);

export const powerDriftReads = counter(
  'bootorch_power_drift_reads_total',
  'Stable nodes whose power the drift sweep re-read, by outcome (same, drift, unknown)',
  ['outcome'],
);

export const powerDriftNodes = gauge(
  'bootorch_power_drift_nodes',
  'Done nodes marked as drifted (power not as bootorch left it), as the last drift tick of this process counted them',
);
