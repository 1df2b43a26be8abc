/**
 * The job queues' loops: for each operator with a job queue, one loop in this process (any number of
 * processes run theirs) takes up to a batch of due jobs, waits out a short gather window while the
 * operator's tick is still deciding (the rest of its pages join the batch), runs the batch
 * (engine/action-jobs.ts runJobBatch), and idles 0.5 s when the queue is empty, or until a kick for
 * the queue is heard (wake).
 */
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { endJobs, fetchJobs, JOB_RETRY_MAX_DELAY, runJobBatch, type FetchedJob, type JobSpec } from './action-jobs.ts';
import type { EngineContext } from './operator.ts';
import { errorText } from './outcome.ts';
import type { TickLeases } from './leases.ts';
import { bossDbOf, failJobs, otherActiveJobExists } from './queue/jobs.ts';
import { actionQueueOf, queueOf } from './queue/names.ts';
import type { OperatorName } from './scheduler.ts';
import type { TickWorkers } from './tick-workers.ts';

/**
 * How long an action drain waits for more jobs when a fetch came back short of a full batch while
 * its operator's tick is still deciding (ms): the rest of the tick's pages join the batch.
 */
const GATHER_MS = 25;
/** How long a drain idles on an empty queue before it looks again (ms), unless woken. */
const IDLE_MS = 500;

export interface ActionDrainsDeps {
  boss: PgBoss;
  leases: TickLeases;
  ticks: TickWorkers;
  log: Logger;
  contextFor(actor: string, log: Logger): Promise<EngineContext>;
}

export class ActionDrains {
  private stopped = false;
  private loops: Promise<void>[] = [];
  /** The idle waits in progress, per queue: resolving one ends the wait. */
  private readonly idlers = new Map<string, () => void>();
  /**
   * Queues whose kick came while their loop was not idle (fetching, running a batch): the next idle
   * returns at once. Without it, jobs committed while an empty fetch was on its way waited out the
   * idle (500 ms per hop of a reboot at 1,000 nodes).
   */
  private readonly woken = new Set<string>();

  constructor(private readonly d: ActionDrainsDeps) {}

  start(specs: JobSpec[]): void {
    this.loops = specs.map((spec) => this.drain(spec));
  }

  /** A kick named this job queue: its loop looks at once (now if idle, else when it next would idle). */
  wake(queue: string): void {
    const idler = this.idlers.get(queue);
    if (idler) idler();
    else this.woken.add(queue);
  }

  /** Ends every loop after its current batch. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const idler of [...this.idlers.values()]) idler();
    await Promise.all(this.loops);
  }

  private idle(queue: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.woken.delete(queue)) return resolve();
      const done = () => {
        clearTimeout(t);
        this.idlers.delete(queue);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.idlers.set(queue, done);
    });
  }

  /**
   * Wait out the gather window if `op`'s tick is deciding: this process's until it ends (at most
   * GATHER_MS), another process's for GATHER_MS. False (no wait) when no tick of `op` runs.
   */
  private async gatherFrom(op: OperatorName): Promise<boolean> {
    const window = new Promise<void>((r) => setTimeout(r, GATHER_MS).unref());
    const own = this.d.ticks.runningTick(op);
    if (own) {
      await Promise.race([own, window]);
      return true;
    }
    if (!(await otherActiveJobExists(this.d.boss.getDb(), queueOf(op), this.d.ticks.ownTickIds(op)))) return false;
    await window;
    return true;
  }

  private async drain(spec: JobSpec): Promise<void> {
    const { boss, leases } = this.d;
    const queue = actionQueueOf(spec.operator);
    const log = this.d.log.child({ operator: spec.operator, queue });
    while (!this.stopped) {
      let jobs: FetchedJob[] = [];
      try {
        const ctx = await this.d.contextFor(`worker:${spec.operator}`, log);
        const size = ctx.options.max_component_batch_size > 0 ? ctx.options.max_component_batch_size : 10_000;
        // This fetch sees every job committed before it: the kicks so far are answered.
        this.woken.delete(queue);
        jobs = await fetchJobs(boss, queue, size);
        if (jobs.length === 0) {
          await this.idle(queue, IDLE_MS);
          continue;
        }
        // A short gather window while the operator's tick is still deciding (here or in another
        // process): the rest of its decisions (its next pages) join this batch. A tick that is over
        // has no more to add, so the batch goes at once.
        if (jobs.length < size && (await this.gatherFrom(spec.operator))) {
          jobs.push(...(await fetchJobs(boss, queue, size - jobs.length)));
        }
        await leases.holdAll(jobs.map((j) => j.id));
        await runJobBatch(ctx, spec, jobs, (tx, endings) => endJobs(boss, bossDbOf(tx), queue, endings));
      } catch (e) {
        // Never a crashed loop: the batch's jobs are failed, so pg-boss retries them.
        log.error({ err: errorText(e), jobs: jobs.length }, 'action batch failed');
        const ids = jobs.map((j) => j.id);
        await failJobs(boss, boss.getDb(), queue, ids, { error: errorText(e) }, JOB_RETRY_MAX_DELAY).catch(() => {});
        if (!this.stopped) await this.idle(queue, IDLE_MS);
      } finally {
        if (jobs.length) await leases.releaseAll(jobs.map((j) => j.id));
      }
    }
  }
}
