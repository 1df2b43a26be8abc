/**
 * This process's operator ticks: one pg-boss worker per operator's tick queue (a `stately` queue: at
 * most one tick waiting and one running across every process), the timer worker that turns wakes and
 * polls that came due into ticks, a timer per wake this process scheduled (so it is looked for when
 * due, not at the next 0.5 s fetch), and the poll keeper (every operator has its next poll waiting,
 * even when a tick could not ask for it). Every tick ends by asking for its next poll.
 */
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { getOptions } from '../db/options.ts';
import { observeTick } from '../observability/engine.ts';
import type { BossScheduler, TimerJob } from './boss-scheduler.ts';
import type { TickLeases } from './leases.ts';
import type { EngineContext, OperatorDef } from './operator.ts';
import { errorText } from './outcome.ts';
import { queueOf, TIMER_QUEUE } from './queue/names.ts';
import { work } from './queue/work.ts';
import type { OperatorName } from './scheduler.ts';

/** How often each process makes sure every operator has its next poll scheduled (ms). */
const POLL_KEEPER_MS = 10_000;
/** Ticks of one operator this process remembers as its own (pg-boss shows them active a moment after they end). */
const OWN_TICKS_KEPT = 4;

export interface TickWorkersDeps {
  boss: PgBoss;
  db: Db;
  scheduler: BossScheduler;
  leases: TickLeases;
  operators: OperatorDef[];
  log: Logger;
  /** What a tick works with (options, clock, adapters configured from the options). */
  contextFor(actor: string, log: Logger): Promise<EngineContext>;
}

export class TickWorkers {
  private readonly workerIds = new Map<string, string>();
  private timerWorker?: string;
  /** This process's ticks while they run: an action drain's gather window ends with its operator's tick. */
  private readonly running = new Map<OperatorName, Promise<void>>();
  /** This process's latest tick jobs per operator. */
  private readonly ownTicks = new Map<OperatorName, string[]>();
  private readonly dueTimers = new Map<number, NodeJS.Timeout>();
  private offDue = () => {};
  private pollKeeper?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly d: TickWorkersDeps) {}

  async start(): Promise<void> {
    for (const def of this.d.operators) {
      const log = this.d.log.child({ operator: def.name });
      const id = await work(this.d.boss, queueOf(def.name), { pollingIntervalSeconds: 0.5, batchSize: 1 }, (jobs) =>
        this.tick(def, log, jobs[0]?.id),
      );
      this.workerIds.set(def.name, id);
    }
    const timerWorker = await work<TimerJob>(this.d.boss, TIMER_QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 50 }, (jobs) =>
      this.timersDue(
        jobs.map((j) => j.id),
        [...new Set(jobs.map((j) => j.data.op))],
      ),
    );
    this.timerWorker = timerWorker;
    // pg-boss looks for due timers every 0.5 s; a wake this process scheduled is looked for when it is
    // due, on this process's clock (a database clock ahead of it: the next regular look finds it).
    this.offDue = this.d.scheduler.onDue((due) => {
      if (this.dueTimers.has(due)) return;
      const t = setTimeout(
        () => {
          this.dueTimers.delete(due);
          this.d.boss.notifyWorker(timerWorker);
        },
        Math.max(0, due - Date.now()) + 5,
      );
      t.unref();
      this.dueTimers.set(due, t);
    });
    // Level-triggered safety net, kept even when a tick could not schedule its next poll (the database
    // was down when it ended): every process makes sure each operator has a poll waiting.
    this.pollKeeper = setInterval(() => void this.keepPolls(), POLL_KEEPER_MS);
  }

  /** Fetch `op`'s tick now if one waits (a kick was heard), instead of at the next 0.5 s fetch. */
  notify(op: string): void {
    const w = this.workerIds.get(op);
    if (w) this.d.boss.notifyWorker(w);
  }

  /** This process's tick of `op` while it runs (undefined when none does). */
  runningTick(op: OperatorName): Promise<void> | undefined {
    return this.running.get(op);
  }

  /** This process's latest tick jobs of `op` (to tell another process's running tick from its own). */
  ownTickIds(op: OperatorName): string[] {
    return this.ownTicks.get(op) ?? [];
  }

  /** Stops this process's own timers (the wakes' and the poll keeper): the first step of stopping the engine. */
  stopTimers(): void {
    this.stopped = true;
    this.offDue();
    for (const t of this.dueTimers.values()) clearTimeout(t);
    clearInterval(this.pollKeeper);
  }

  /** Stops the workers (after stopTimers): pg-boss fetches no more ticks or timers for this process. */
  async stopWorkers(): Promise<void> {
    for (const def of this.d.operators) await this.d.boss.offWork(queueOf(def.name)).catch(() => {});
    if (this.timerWorker) await this.d.boss.offWork(TIMER_QUEUE).catch(() => {});
  }

  /** One tick of `def`, leased while it runs; it never throws (the next poll comes as usual). */
  private async tick(def: OperatorDef, log: Logger, jobId: string | undefined): Promise<void> {
    let period = 15;
    const started = Date.now();
    if (jobId) {
      await this.d.leases.hold(jobId);
      this.ownTicks.set(def.name, [jobId, ...this.ownTickIds(def.name)].slice(0, OWN_TICKS_KEPT));
    }
    let ended = () => {};
    this.running.set(def.name, new Promise<void>((r) => (ended = r)));
    try {
      const ctx = await this.d.contextFor(`operator:${def.name}`, log);
      period = def.period(ctx.options);
      await observeTick(def.name, () => def.run(ctx));
    } catch (e) {
      log.error({ err: errorText(e) }, 'operator tick failed');
    } finally {
      this.running.delete(def.name);
      ended();
      log.debug({ ms: Date.now() - started }, 'tick');
      if (period > 0)
        await this.d.scheduler.poll(def.name, period).catch((e) => log.warn({ err: errorText(e) }, 'could not schedule poll'));
      if (jobId) await this.d.leases.release(jobId);
    }
  }

  /** Wakes and polls that came due: their operators' ticks are enqueued, and this process's workers fetch them at once. */
  private async timersDue(jobIds: string[], ops: OperatorName[]): Promise<void> {
    await this.d.leases.holdAll(jobIds);
    try {
      await this.d.scheduler.kick(this.d.db, ops);
      for (const op of ops) this.notify(op);
    } finally {
      await this.d.leases.releaseAll(jobIds);
    }
  }

  private async keepPolls(): Promise<void> {
    try {
      const options = await getOptions(this.d.db);
      for (const def of this.d.operators) {
        const period = def.period(options);
        if (period > 0 && !this.stopped) await this.d.scheduler.poll(def.name, period);
      }
    } catch {
      /* database unavailable: next round */
    }
  }
}
