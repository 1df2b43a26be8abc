/**
 * Operators decide, per-component jobs act. An operator's tick records its decision on the
 * components (last action, attempt) and, in the same transaction, enqueues one job per component on
 * the operator's action queue (`bootorch-act-<operator>`, scheduler.enqueueActions). Any worker process drains
 * the queue in batches (up to max_component_batch_size, after a short gather window), and for one
 * batch:
 * - drops the jobs whose decision no longer stands (the node moved on: another session, a newer
 *   attempt, a new desired configuration): they complete having done nothing;
 * - for a retried job (a transient failure, or a worker that died with it), leaves out the nodes
 *   already where the action takes them (a node already on is not powered on again);
 * - acts once for the batch (the spec groups by operation, boot artifacts or configuration: one
 *   outside call per group), and completes or fails each job on its own: a transient problem fails
 *   the job, and pg-boss retries it with the job's delay and backoff (capped at its retryMaxDelay); a permanent
 *   problem fails the component with the reason from the closed set. After the last retry of a
 *   transient problem the component only keeps the error: the operator decides again when its wait is
 *   over (a new BOS attempt), as the tick did before jobs, so the retry policy gives up on it, not the
 *   job. Outcomes, follow-ups and the jobs' completion commit in one transaction.
 * Due jobs (scheduler.decideLater) are delayed decisions: when one comes due, the operator decides
 * again for just its components (the graceful to forceful escalation), recording and enqueueing as a
 * tick would. A lost job costs nothing but time: the operator's periodic tick re-decides from the level.
 */
import type PgBoss from 'pg-boss';
import type { Db } from '../db/client.ts';
import { recordActed, selectComponents, type EngineComponent } from '../db/components/select.ts';
import type { EngineContext, Step } from './operator.ts';
import { commitStep } from './operator.ts';
import { errorText, fromError, reasonOf, type Outcome } from './outcome.ts';
import type { ActionJob, DueJob, JobOperatorName, OperatorName } from './scheduler.ts';
import { countEnded, countStarted, observeBatch } from '../observability/engine.ts';
import { recordComponentOutcomes } from './component-outcomes.ts';
import { DEFAULT_OPTIONS } from '../domain/options.ts';
import { deleteActiveJobs, failJobs, fetchDueJobs } from './queue/jobs.ts';

/**
 * Seconds between a transient failure and the job's first retry (doubling, with jitter, after that):
 * the option's default, for the queues' defaults and the due jobs. Action jobs carry their own (jobRetry).
 */
export const JOB_RETRY_DELAY = DEFAULT_OPTIONS.job_retry_delay;
/**
 * The longest wait before a job's retry (seconds), for jobs whose data carries no retryMaxDelay.
 * pg-boss 10 doubles without a ceiling (its 5th retry waits 16 to 32 s, its 7th over a minute), so a
 * node would wait long after the service is back.
 */
export const JOB_RETRY_MAX_DELAY = DEFAULT_OPTIONS.job_retry_max_delay;
/**
 * Seconds a job may wait in its queue and still act on the decision's own stamp (last_action_at, set
 * when it was recorded): a job that waited longer, or is retried, is claimed first (spec.claim), so its
 * waits count from the call. Claiming every job cost one more update of every acted-on component row.
 */
export const CLAIM_AFTER = 5;

/** What follows an action, for the components acted on. */
export interface Next {
  kick?: OperatorName[];
  wake?: Array<[OperatorName, number]>;
  /** Per-component delayed decisions: `op` decides again for `rows` after `seconds`. */
  later?: Array<{ op: JobOperatorName; rows: EngineComponent[]; seconds: number }>;
}

/** How an operator's jobs are acted on (its half of "operators decide, jobs act"). */
export interface JobSpec {
  operator: JobOperatorName;
  /** The action, for metrics and traces. */
  action: string;
  /** Whether the decision a job carries still stands on the row as it is now. */
  holds(row: EngineComponent, job: ActionJob): boolean;
  /**
   * Just before acting, for the jobs that waited (retried, or queued over CLAIM_AFTER seconds): the rows
   * whose decision still stands, now claimed (their waits count from the call); absent when acting claims nothing.
   */
  claim?(ctx: EngineContext, rows: EngineComponent[]): Promise<EngineComponent[]>;
  /** Of these rows (retried jobs), the ids of nodes already where the action takes them. */
  alreadyDone?(ctx: EngineContext, rows: EngineComponent[]): Promise<Set<string>>;
  /** The side effect for a batch; the outcome of each component that is not simply done. */
  perform(ctx: EngineContext, rows: EngineComponent[]): Promise<Map<string, Outcome>>;
  next?(ctx: EngineContext, acted: EngineComponent[]): Next;
  /** Decide again now for these components (a due job); absent when the operator takes none. */
  redecide?(ctx: EngineContext, ids: string[]): Promise<Step<EngineComponent>>;
}

/** An action queue's job as fetchJobs hands it out. */
export interface FetchedJob<T extends ActionJob | DueJob = ActionJob | DueJob> {
  id: string;
  name: string;
  data: T;
  /** Runs that failed before this one (pg-boss's retry_count). */
  retryCount: number;
  createdOn: Date;
  startAfter: Date;
}

/** How a job ends: completed (with what it did) or failed (retried by pg-boss while it has retries). */
interface Ending {
  job: FetchedJob;
  fail: boolean;
  output: Record<string, unknown>;
}

/** How pg-boss retries one job: its ActionJob fields of that name. */
export type JobRetry = Pick<ActionJob, 'retryLimit' | 'retryDelay' | 'retryBackoff' | 'retryMaxDelay'>;

/** The jobs of one action for the components, as a tick or a due decision records them. */
export function actionJobs(
  rows: EngineComponent[],
  action: string,
  attempt: (c: EngineComponent) => number | null,
  retry: (c: EngineComponent) => JobRetry,
  extra: (c: EngineComponent) => Partial<ActionJob> = () => ({}),
): ActionJob[] {
  return rows.map((c) => ({
    id: c.id,
    session: c.session,
    tenant: c.sessionTenant,
    action,
    attempt: attempt(c),
    version: c.version,
    ...(c.trace ? { trace: c.trace } : {}),
    ...retry(c),
    ...extra(c),
  }));
}

/** Enqueue the due jobs of a Next, grouped by delay (one statement per distinct delay, one job per session in it). */
export async function scheduleLater(tx: Db, ctx: EngineContext, later: Next['later']): Promise<void> {
  for (const l of later ?? []) {
    if (l.rows.length === 0) continue;
    await ctx.scheduler.decideLater(
      tx,
      l.op,
      l.rows.map((c) => ({ id: c.id, session: c.session, tenant: c.sessionTenant })),
      l.seconds,
    );
  }
}

/**
 * Run one fetched batch of a queue: the due decisions, then the actions. `finish` completes or fails
 * the jobs on the transaction that records their outcomes.
 */
export async function runJobBatch(
  ctx: EngineContext,
  spec: JobSpec,
  jobs: FetchedJob[],
  finish: (tx: Db, endings: Ending[]) => Promise<void>,
): Promise<void> {
  const due = jobs.filter((j) => 'due' in j.data);
  const acts = jobs.filter((j) => !('due' in j.data)) as FetchedJob<ActionJob>[];
  if (due.length) {
    const ids = [...new Set(due.flatMap((j) => (j.data as DueJob).ids))];
    const step: Step<EngineComponent> = spec.redecide ? await spec.redecide(ctx, ids) : { outcomes: [] };
    await commitStep(ctx, recordComponentOutcomes, step, (tx) =>
      finish(
        tx,
        due.map((job) => ({ job, fail: false, output: { decided: true } })),
      ),
    );
  }
  if (acts.length) await runActions(ctx, spec, acts, finish);
}

async function runActions(
  ctx: EngineContext,
  spec: JobSpec,
  jobs: FetchedJob<ActionJob>[],
  finish: (tx: Db, endings: Ending[]) => Promise<void>,
): Promise<void> {
  const rows = new Map((await selectComponents(ctx.db, { ids: [...new Set(jobs.map((j) => j.data.id))] })).map((r) => [r.id, r]));
  const endings: Ending[] = [];
  // One job per component acts (a component with two jobs in one batch: the later ones do nothing).
  const acting = new Map<string, FetchedJob<ActionJob>>();
  for (const job of jobs) {
    const row = rows.get(job.data.id);
    if (!row || !row.enabled || acting.has(row.id) || !spec.holds(row, job.data))
      endings.push({ job, fail: false, output: { skipped: 'the decision no longer stands' } });
    else acting.set(row.id, job);
  }
  let todo = [...acting.keys()].map((id) => rows.get(id)!);
  const retried = todo.filter((r) => acting.get(r.id)!.retryCount > 0);
  if (retried.length && spec.alreadyDone) {
    try {
      const already = await spec.alreadyDone(ctx, retried);
      for (const id of already) endings.push({ job: acting.get(id)!, fail: false, output: { skipped: 'the node is already there' } });
      todo = todo.filter((r) => !already.has(r.id));
    } catch (e) {
      // Not knowing the node's state, do not act again: retry the jobs later.
      const o = fromError(e);
      for (const r of retried) outcomesEnd(endings, acting.get(r.id)!, o);
      todo = todo.filter((r) => acting.get(r.id)!.retryCount === 0);
    }
  }
  // Claimed: the jobs that waited (retried, or queued longer than CLAIM_AFTER): their waits restart
  // now. A job run at once keeps the decision's stamp, as the tick that called at once did.
  const now = ctx.now().getTime();
  const stale = todo.filter((r) => {
    const job = acting.get(r.id)!;
    return job.retryCount > 0 || now - new Date(job.createdOn).getTime() > CLAIM_AFTER * 1000;
  });
  if (stale.length && spec.claim) {
    const claimed = new Set((await spec.claim(ctx, stale)).map((r) => r.id));
    const lost = new Set(stale.filter((r) => !claimed.has(r.id)).map((r) => r.id));
    for (const id of lost) endings.push({ job: acting.get(id)!, fail: false, output: { skipped: 'the decision no longer stands' } });
    todo = todo.filter((r) => !lost.has(r.id));
  }
  let acted = new Map<string, Outcome>();
  if (todo.length) {
    try {
      // Retries: a later attempt of the action (BOS's counter) or a retry of its job.
      const retries = todo.filter((r) => (acting.get(r.id)!.data.attempt ?? 1) > 1 || acting.get(r.id)!.retryCount > 0).length;
      await observeBatch(
        ctx.log,
        spec.action,
        todo.length,
        retries,
        async () => {
          acted = await spec.perform(ctx, todo);
          return [...acted].flatMap(([id, o]) =>
            o.kind !== 'done' && o.problem ? [{ id, reason: o.problem.reason, error: o.problem.error }] : [],
          );
        },
        (e) => reasonOf(e),
        { traces: todo.map((r) => acting.get(r.id)!.data.trace), sessions: todo.map((r) => r.session), ids: todo.map((r) => r.id) },
      );
    } catch (e) {
      ctx.log.warn({ err: errorText(e), operator: spec.operator, count: todo.length }, 'action failed for a batch');
      const o = fromError(e);
      acted = new Map(todo.map((c) => [c.id, o]));
    }
  }
  const outcomes: Array<[EngineComponent, Outcome]> = [];
  for (const r of todo) {
    const job = acting.get(r.id)!;
    const o = acted.get(r.id) ?? { kind: 'done' as const };
    outcomesEnd(endings, job, o);
    outcomes.push([r, o]);
  }
  const next = spec.next?.(ctx, todo) ?? {};
  await commitStep(ctx, recordComponentOutcomes, { outcomes, kick: next.kick, wake: next.wake }, async (tx) => {
    await scheduleLater(tx, ctx, next.later);
    // The status pass this kicks reads the rows written since the last one, and acting wrote none: a
    // pass that read these nodes after their decision but before the call would leave them waiting
    // for the next transit pass. Recorded, they count as changed (one row for the batch).
    if (next.kick?.includes('status')) await recordActed(tx, [...acting.keys()]);
    await finish(tx, endings);
  });
}

/**
 * How a job ends for its component's outcome: a transient problem fails the job, so pg-boss retries
 * it with backoff (or, on its last retry, leaves it failed); anything else completes it, saying what happened.
 */
function outcomesEnd(endings: Ending[], job: FetchedJob<ActionJob>, o: Outcome): void {
  const problem = o.kind !== 'done' && o.problem ? { error: o.problem.error, reason: o.problem.reason } : {};
  if (o.kind === 'continue' && o.retry) endings.push({ job, fail: true, output: problem });
  else endings.push({ job, fail: false, output: { outcome: o.kind, ...problem } });
}

/**
 * End a batch's jobs on `db` (the transaction that records their outcomes): the completed ones deleted
 * in one statement, the failed ones failed in one per distinct error (pg-boss keeps it as the job's
 * output, for explain), never one per job.
 */
export async function endJobs(boss: PgBoss, db: PgBoss.Db, queue: string, endings: Ending[]): Promise<void> {
  const completed = endings.filter((e) => !e.fail).map((e) => e.job.id);
  if (completed.length) await deleteActiveJobs(db, queue, completed);
  const failed = new Map<string, { output: Record<string, unknown>; ids: string[] }>();
  for (const e of endings.filter((x) => x.fail)) {
    const key = JSON.stringify(e.output);
    const g = failed.get(key) ?? { output: e.output, ids: [] };
    g.ids.push(e.job.id);
    failed.set(key, g);
  }
  for (const g of failed.values()) await failJobs(boss, db, queue, g.ids, g.output, JOB_RETRY_MAX_DELAY);
  countEnded(queue, completed.length, endings.length - completed.length);
}

/** Take up to `size` due jobs of a job queue (fetchDueJobs: in start_after order) and count them started. */
export async function fetchJobs(boss: PgBoss, queue: string, size: number): Promise<FetchedJob[]> {
  const rows = await fetchDueJobs<ActionJob | DueJob>(boss.getDb(), queue, size);
  const jobs = rows.map((x) => ({
    id: x.id,
    name: x.name,
    data: x.data,
    retryCount: x.retry_count,
    createdOn: x.created_on,
    startAfter: x.start_after,
  }));
  countStarted(queue, jobs);
  return jobs;
}
