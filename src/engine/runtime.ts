/**
 * The engine on pg-boss, composed of named parts:
 * - BossScheduler (boss-scheduler.ts): the Scheduler; everything that starts a tick goes through it
 *   (writes kick in their transaction, node report batches just after their commit: reports.ts;
 *   waits are wakes; every tick ends by asking for its next poll), and operators enqueue their
 *   action jobs and delayed decisions through it.
 * - TickWorkers (tick-workers.ts): the operators' tick workers, the timer worker, and the poll keeper.
 * - ActionDrains (action-drains.ts): the job queues' loops, with the gather window.
 * - KickListener (kick-listener.ts): NOTIFYs from any process, with reconnect.
 * - TickLeases (leases.ts): which process runs which job, and the reaper of a dead process's jobs.
 * Each operator's tick queue is `stately` (at most one tick waiting and one running, across every
 * worker process), so ticks never overlap and a burst of kicks is one tick.
 */
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { JOB_OPERATORS, OPERATORS, type Scheduler } from './scheduler.ts';
import { JOB_RETRY_DELAY } from './action-jobs.ts';
import type { EngineContext, OperatorDef } from './operator.ts';
import type { Adapters } from '../adapters/ports.ts';
import { getOptions } from '../db/options.ts';
import { databaseHealthy, sessionClient, sessionUrlOf } from '../db/client.ts';
import { errorText } from './outcome.ts';
import { databaseClock } from './clock.ts';
import { TickLeases } from './leases.ts';
import { checkBossSchema } from './queue/schema.ts';
import { ACTION_QUEUE_PREFIX, actionQueueOf, ENGINE_QUEUES, queueOf, TIMER_QUEUE } from './queue/names.ts';
import { ACTION_EXPIRE_SECONDS, BossScheduler } from './boss-scheduler.ts';
import { TickWorkers } from './tick-workers.ts';
import { ActionDrains } from './action-drains.ts';
import { KickListener } from './kick-listener.ts';

const BOSS_SETUP_LOCK = 727_002;

export interface BossHandle {
  boss: PgBoss;
  scheduler: BossScheduler;
  stop(): Promise<void>;
}

/** Start pg-boss and create the queues. Used by API processes too (they only enqueue). */
export async function startBoss(url: string, log: Logger, opts: { max?: number } = {}): Promise<BossHandle> {
  const boss = new PgBoss({
    connectionString: url,
    max: opts.max ?? 4,
    application_name: 'bootorch-boss',
    maintenanceIntervalSeconds: 120,
  });
  boss.on('error', (e: Error & { code?: string }) => {
    // Two processes racing for a stately tick: the loser's fetch hits the unique index. Harmless.
    if (e?.code === '23505') return;
    log.warn({ err: errorText(e) }, 'pg-boss error');
  });
  // Processes starting together (replicas, a worker) would race to create pg-boss's schema and queues
  // and deadlock; a session advisory lock makes them take turns.
  const lock = sessionClient({ connectionString: sessionUrlOf(url), application_name: 'bootorch-boss-setup' });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [BOSS_SETUP_LOCK]);
    await boss.start();
    await checkBossSchema(boss.getDb());
    for (const op of OPERATORS) {
      await boss.createQueue(queueOf(op), { name: queueOf(op), policy: 'stately', retryLimit: 0, expireInSeconds: 3600 });
    }
    await boss.createQueue(TIMER_QUEUE, { name: TIMER_QUEUE, policy: 'short', retryLimit: 2, retryDelay: 1, expireInSeconds: 60 });
    // `short`: one waiting job per singleton key (a component), however many ticks decide before it runs.
    for (const op of JOB_OPERATORS) {
      await boss.createQueue(actionQueueOf(op), {
        name: actionQueueOf(op),
        policy: 'short',
        retryLimit: 3,
        retryDelay: JOB_RETRY_DELAY,
        retryBackoff: true,
        expireInSeconds: ACTION_EXPIRE_SECONDS,
      });
    }
  } finally {
    await lock.end().catch(() => {});
  }
  return {
    boss,
    scheduler: new BossScheduler(boss),
    stop: () => boss.stop({ graceful: true, wait: true, timeout: 10_000 }),
  };
}

export interface EngineHandle {
  scheduler: Scheduler;
  /** Resolves when every operator has finished at least one tick (tests). */
  stop(): Promise<void>;
  healthy(): Promise<boolean>;
}

export interface EngineDeps {
  url: string;
  db: Db;
  adapters: Adapters;
  operators: OperatorDef[];
  log: Logger;
  boss?: BossHandle;
}

export async function startEngine(deps: EngineDeps): Promise<EngineHandle> {
  const handle = deps.boss ?? (await startBoss(deps.url, deps.log));
  const { boss, scheduler } = handle;
  // A killed process's ticks must not hold their stately queues until expiry (leases.ts).
  const leases = new TickLeases({ url: deps.url, log: deps.log, queuePrefix: ENGINE_QUEUES });
  const contextFor = (actor: string, log: Logger) => engineContext(deps, scheduler, actor, log);

  const ticks = new TickWorkers({ boss, db: deps.db, scheduler, leases, operators: deps.operators, log: deps.log, contextFor });
  await ticks.start();
  // A reaped tick is owed: run the operator again (reaped timers and action jobs are retried by pg-boss itself).
  await leases.start(boss, async (queues) => {
    const ops = OPERATORS.filter((op) => queues.includes(queueOf(op)));
    if (ops.length) await scheduler.kick(deps.db, ops).catch(() => {});
  });
  const drains = new ActionDrains({ boss, leases, ticks, log: deps.log, contextFor });
  drains.start(deps.operators.flatMap((d) => (d.jobs ? [d.jobs] : [])));
  // Kicks from any process: a job queue's drain looks at once; an operator's tick worker fetches at once.
  const listener = new KickListener({
    url: deps.url,
    log: deps.log,
    onKick: (name) => {
      if (name.startsWith(ACTION_QUEUE_PREFIX)) drains.wake(name);
      ticks.notify(name);
    },
    onReconnect: () =>
      scheduler.kick(
        deps.db,
        deps.operators.map((d) => d.name),
      ),
  });
  await listener.start();

  // Start every loop now: one tick each (stately: a no-op for operators already queued).
  await scheduler.kick(
    deps.db,
    deps.operators.map((d) => d.name),
  );

  return {
    scheduler,
    healthy: () => databaseHealthy(deps.db),
    async stop() {
      ticks.stopTimers();
      await drains.stop();
      await listener.stop();
      await leases.stop();
      await ticks.stopWorkers();
      if (!deps.boss) await handle.stop();
    },
  };
}

/** What a tick or an action batch works with: the options and clock read now, the adapters configured from them. */
async function engineContext(deps: EngineDeps, scheduler: Scheduler, actor: string, log: Logger): Promise<EngineContext> {
  const options = await getOptions(deps.db);
  const now = await databaseClock(deps.db);
  deps.adapters.configure({
    timeouts: {
      hsm: options.hsm_read_timeout,
      pcs: options.pcs_read_timeout,
      bss: options.bss_read_timeout,
      cfs: options.cfs_read_timeout,
      ims: options.ims_read_timeout,
    },
    maxBatchSize: options.max_component_batch_size,
  });
  return { db: deps.db, adapters: deps.adapters, options, now, log, scheduler, actor };
}
