/**
 * The engine's hooks, three in all: where pg-boss hands jobs to a handler (observeJobs, the wrapper
 * engine/queue/work.ts gives every handler it registers), where an operator tick runs
 * (observeTick), and where an action batch runs and its outcome is recorded (observeBatch). Each
 * counts, times and opens a span; none changes what it wraps.
 */
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import {
  actionsExhausted,
  actionsFailed,
  actionsRetried,
  actionsStarted,
  actionsSucceeded,
  jobsActive,
  jobsCompleted,
  jobsFailed,
  jobsReaped,
  jobsRetried,
  jobsStarted,
  jobWaitSeconds,
  operatorTickSeconds,
  operatorTicks,
} from './metrics.ts';
import { inSpan, inSpanOf } from './tracing.ts';
import { traceLogger } from './logging.ts';

/** Xnames named on one batch's span, at most (a 10,000-node batch says how many, and the first of them). */
const MAX_XNAMES = 100;

/**
 * What an action batch is about, for its span and log lines: the sessions' traces (a batch of one
 * session's nodes joins its trace, and its lines carry its trace id), the nodes and each one's session.
 */
export interface BatchAbout {
  traces?: ReadonlyArray<string | null | undefined>;
  /** Each node's session ('' for none), in the order of `ids`. */
  sessions?: readonly string[];
  ids?: readonly string[];
}

/** A tick of `operator`: counted (ok / error), timed, and the root span of whatever it calls. */
export async function observeTick<T>(operator: string, tick: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  let outcome = 'ok';
  try {
    return await inSpan(`tick ${operator}`, { 'bootorch.operator': operator }, () => tick());
  } catch (e) {
    outcome = 'error';
    throw e;
  } finally {
    operatorTicks.inc({ operator, outcome });
    operatorTickSeconds.observe({ operator }, Number(process.hrtime.bigint() - start) / 1e9);
  }
}

/**
 * One action batch (one info line, one span; at debug, a line per component it could not act on):
 * `count` components recorded for `action`, `retries` of them attempted before.
 * `run` does the side effect and returns the per-component problems (a component with several counts
 * once); a throw fails the whole batch with the reason `reasonOfThrow` gives, and propagates.
 */
export async function observeBatch<P extends { id: string; reason: string; error?: string }>(
  log: Logger,
  action: string,
  count: number,
  retries: number,
  run: () => Promise<P[]>,
  reasonOfThrow: (e: unknown) => string,
  about: BatchAbout = {},
): Promise<P[]> {
  actionsStarted.inc({ action }, count);
  if (retries) actionsRetried.inc({ action }, retries);
  const sessions = [...new Set(about.sessions ?? [])].filter((s) => s !== '');
  // A batch of one session's nodes: its lines carry the session's trace id (tracing on or off).
  const traces = [...new Set(about.traces ?? [])].filter((t) => !!t);
  const lines = sessions.length === 1 && traces.length === 1 ? traceLogger(log, traces[0]) : log;
  const attributes = {
    'bootorch.action': action,
    'bootorch.components': count,
    ...(sessions.length ? { 'bootorch.session': sessions.slice(0, 10).join(',') } : {}),
    ...(about.ids?.length ? { 'bootorch.xnames': about.ids.slice(0, MAX_XNAMES).join(',') } : {}),
  };
  // The batch joins its session's trace (one session; several: linked), the trace of the request that made it.
  return inSpanOf(about.traces ?? [], `action ${action}`, attributes, async (span) => {
    let problems: P[];
    try {
      problems = await run();
    } catch (e) {
      actionsFailed.inc({ action, reason: reasonOfThrow(e) }, count);
      span.setAttribute('bootorch.failed', count);
      throw e;
    }
    const byId = new Map(problems.map((p) => [p.id, p.reason]));
    // Each node the batch could not act on, with its cause, on the span (a trace answers "why x1000c0s0b0n0?").
    for (const p of problems.slice(0, MAX_XNAMES))
      span.addEvent('component problem', {
        'bootorch.xname': p.id,
        'bootorch.reason': p.reason,
        ...(p.error ? { 'bootorch.error': p.error } : {}),
      });
    for (const reason of byId.values()) actionsFailed.inc({ action, reason });
    actionsSucceeded.inc({ action }, Math.max(0, count - byId.size));
    span.setAttribute('bootorch.failed', byId.size);
    const reasons: Record<string, number> = {};
    for (const r of byId.values()) reasons[r] = (reasons[r] ?? 0) + 1;
    // The decision, once per batch (never per node): how many were acted on, how many failed and why.
    lines.info(
      { action, nodes: count, retries, failed: byId.size, ...(byId.size ? { reasons } : {}), ...sessionField(sessions) },
      'action batch',
    );
    // At debug, each node it could not act on, as on the span: a node's lines are found by its xname.
    if (problems.length && lines.isLevelEnabled('debug')) {
      const sessionOf = new Map(about.ids?.map((id, i) => [id, about.sessions?.[i] ?? '']));
      for (const p of problems) {
        const session = sessionOf.get(p.id);
        lines.debug(
          { action, xname: p.id, ...(session ? { session } : {}), reason: p.reason, ...(p.error ? { err: p.error } : {}) },
          `component problem: ${p.reason}`,
        );
      }
    }
    return problems;
  });
}

/** A line about one session names it `session`, as every line about a session does; about several, `sessions`. */
function sessionField(sessions: readonly string[]): Record<string, unknown> {
  if (sessions.length === 1) return { session: sessions[0] };
  return sessions.length ? { sessions } : {};
}

/** Components given up on at the retry limit, by the reason they were failed with. */
export function countExhausted(action: string, reasons: string[]): void {
  for (const reason of reasons) actionsExhausted.inc({ action, reason });
}

/**
 * A pg-boss handler of `queue`, counted: every job it is handed started (and retried), completed or
 * failed, and how long it waited once due. Wraps the handler given to pg-boss's `work`, which must ask
 * for the jobs' metadata (`includeMetadata: true`): engine/queue/work.ts is the one place that does.
 */
export function observeJobs<T>(
  queue: string,
  handler: (jobs: PgBoss.JobWithMetadata<T>[]) => Promise<unknown>,
): (jobs: PgBoss.JobWithMetadata<T>[]) => Promise<unknown> {
  return async (jobs) => {
    jobsStarted.inc({ queue }, jobs.length);
    const retried = jobs.filter((j) => j.retryCount > 0).length;
    if (retried) jobsRetried.inc({ queue }, retried);
    const now = Date.now();
    for (const j of jobs) {
      const due = Math.max(new Date(j.createdOn ?? now).getTime(), new Date(j.startAfter ?? now).getTime());
      jobWaitSeconds.observe({ queue }, Math.max(0, (new Date(j.startedOn ?? now).getTime() - due) / 1000));
    }
    jobsActive.inc({ queue }, jobs.length);
    try {
      const r = await handler(jobs);
      jobsCompleted.inc({ queue }, jobs.length);
      return r;
    } catch (e) {
      jobsFailed.inc({ queue }, jobs.length);
      throw e;
    } finally {
      jobsActive.dec({ queue }, jobs.length);
    }
  };
}

/**
 * The job queues' side of what observeJobs counts for pg-boss's handlers (engine/action-jobs.ts fetches
 * and ends its jobs itself): jobs started, retried, and their wait from due to started.
 */
export function countStarted(queue: string, jobs: ReadonlyArray<{ retryCount: number; createdOn: Date; startAfter: Date }>): void {
  if (jobs.length === 0) return;
  jobsStarted.inc({ queue }, jobs.length);
  const retried = jobs.filter((j) => j.retryCount > 0).length;
  if (retried) jobsRetried.inc({ queue }, retried);
  const now = Date.now();
  for (const j of jobs) {
    const due = Math.max(new Date(j.createdOn).getTime(), new Date(j.startAfter).getTime());
    jobWaitSeconds.observe({ queue }, Math.max(0, (now - due) / 1000));
  }
}

/** Jobs of a job queue ended: completed, or failed (pg-boss retries them while they have retries). */
export function countEnded(queue: string, completed: number, failed: number): void {
  if (completed) jobsCompleted.inc({ queue }, completed);
  if (failed) jobsFailed.inc({ queue }, failed);
}

/** Jobs of `queue` the lease reaper failed: the process running them was gone. */
export function countReaped(queue: string, reaped: number): void {
  if (reaped) jobsReaped.inc({ queue }, reaped);
}
