/**
 * The engine on pg-boss. Each operator is a `stately` queue (at most one tick waiting and one
 * running, across every worker process), so ticks never overlap and a burst of kicks is one tick.
 * Everything that starts a tick goes through the Scheduler (engine/scheduler.ts): writes kick in
 * their transaction (node report batches just after their commit: engine/reports.ts), waits are wakes
 * (timer jobs with startAfter that kick their operator when due), and every tick ends by asking for
 * its next poll. The process also keeps the polls alive (a tick
 * that could not ask for its poll), kicks the operators whose ticks the reaper freed, and kicks every
 * operator after its NOTIFY listener reconnects; each of these is a scheduler call.
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { groupBy } from '../domain/lists.ts';
import { JOB_OPERATORS, OPERATORS, type DueJob, type OperatorName, type Scheduler } from './scheduler.ts';
import { endJobs, fetchJobs, JOB_RETRY_DELAY, JOB_RETRY_MAX_DELAY, runJobBatch, type FetchedJob, type JobSpec } from './action-jobs.ts';
import type { EngineContext, OperatorDef } from './operator.ts';
import type { Adapters } from '../adapters/ports.ts';
import { getOptions } from '../db/options.ts';
import { databaseHealthy, sessionUrlOf } from '../db/client.ts';
import { errorText } from './outcome.ts';
import { databaseClock } from './clock.ts';
import { TickLeases } from './leases.ts';
import { observeTick } from '../observability/engine.ts';
import { work } from './queue/work.ts';
import { checkBossSchema } from './queue/schema.ts';
import { bossDbOf, failJobs, otherActiveJobExists } from './queue/jobs.ts';
import { ACTION_QUEUE_PREFIX, actionQueueOf, ENGINE_QUEUES, KICK_CHANNEL, queueOf, TIMER_QUEUE } from './queue/names.ts';

/** How often each process makes sure every operator has its next poll scheduled (ms). */
const POLL_KEEPER_MS = 10_000;
const BOSS_SETUP_LOCK = 727_002;
/**
 * How long an action worker waits for more jobs when a fetch came back short of a full batch while
 * its operator's tick is still deciding (ms): the rest of the tick's pages join the batch.
 */
const GATHER_MS = 25;
/**
 * Wakes are due on this grain (ms): the wakes asked for one moment are one timer job, and none comes
 * more than this after the moment asked (whole seconds made a 1 s transit re-poll come 1 to 2 s on).
 */
const WAKE_GRAIN_MS = 100;
/** How long an action job may be active before pg-boss expires it (a dead worker's job is reaped sooner by its lease). */
const ACTION_EXPIRE_SECONDS = 900;

export interface BossHandle {
  boss: PgBoss;
  scheduler: Scheduler;
  /** Enqueue ticks and tell every worker, even with kicks off (a timer came due; the engine starts). */
  enqueue(db: Db, ops: readonly OperatorName[]): Promise<void>;
  /** Hear of each wake this process schedules (its due database time, ms); returns the unsubscribe. */
  onDue(listener: (dueMs: number) => void): () => void;
  stop(): Promise<void>;
}

/** pg-boss's `db` option: its SQL runs on this handle (inside the handle's transaction, if any). */
const on = (db: Db) => ({ db: bossDbOf(db) });

/** Start pg-boss and create the queues. Used by API processes too (they only enqueue). */
export async function startBoss(url: string, log: Logger, opts: { kicks?: boolean; max?: number } = {}): Promise<BossHandle> {
  const boss = new PgBoss({
    connectionString: url,
    max: opts.max ?? 4,
    application_name: 'bootorch-boss',
    maintenanceIntervalSeconds: 120,
  });
  boss.on('error', (e: any) => {
    // Two processes racing for a stately tick: the loser's fetch hits the unique index. Harmless.
    if (e?.code === '23505') return;
    log.warn({ err: errorText(e) }, 'pg-boss error');
  });
  // Processes starting together (replicas, a worker) would race to create pg-boss's schema and queues
  // and deadlock; a session advisory lock makes them take turns.
  const lock = new pg.Client({ connectionString: sessionUrlOf(url), application_name: 'bootorch-boss-setup' });
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
  const enqueue = async (db: Db, ops: readonly OperatorName[]) => {
    if (ops.length === 0) return;
    const unique = [...new Set(ops)];
    for (const op of unique) await boss.send(queueOf(op), {}, on(db) as PgBoss.SendOptions);
    // Every worker process LISTENs and fetches at once, instead of at its next 0.5 s fetch.
    await db.$client.query(`select pg_notify('${KICK_CHANNEL}', $1)`, [unique.join(',')]);
  };
  // Kicks off (the BOS-like polling baseline): writes start nothing; timers and polls still run.
  const kicksOn = opts.kicks !== false;
  const dueListeners = new Set<(dueMs: number) => void>();
  const scheduler: Scheduler = {
    kick: (db, ops) => (kicksOn ? enqueue(db, ops) : Promise.resolve()),
    async wakeAt(db, op, at) {
      // The key names the moment it is due (to WAKE_GRAIN_MS), so many wakes for one moment are one timer job.
      const due = Math.ceil(at.getTime() / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
      await boss.send(TIMER_QUEUE, { op }, {
        ...on(db),
        startAfter: new Date(due),
        singletonKey: `wake:${op}@${due}`,
      } as PgBoss.SendOptions);
      for (const l of dueListeners) l(due);
    },
    async poll(op, seconds) {
      // Relative: pg-boss adds it to the database's now(); one pending poll per operator.
      await boss.send(TIMER_QUEUE, { op }, { startAfter: Math.max(0.5, seconds), singletonKey: `poll:${op}` });
    },
    async act(db, op, jobs) {
      if (jobs.length === 0) return;
      // One insert for the whole set (pg-boss's array insert), on the deciding transaction. The ids are
      // time-ordered (UUIDv7), so the primary key (name, id) grows at its right edge: pg-boss's own
      // random v4 ids put each of a batch's rows on another index page (10,000 nodes, 20,012 jobs:
      // 1,263 -> 1,066 ms of the insert's database time, mean of 4 alternated runs). The batch's ids
      // share its millisecond and take their random bits from one fill: uuid's own v7 asks the system
      // for 16 random bytes per id (10 us each here, 0.2 s of a 10,000-node reboot's worker).
      const msecs = Date.now();
      const random = randomBytes(16 * jobs.length);
      await boss.insert(
        jobs.map((j, i) => ({
          id: uuidv7({ msecs, random: random.subarray(16 * i, 16 * i + 16) }),
          name: actionQueueOf(op),
          data: j,
          singletonKey: j.id,
          retryLimit: j.retryLimit,
          retryDelay: j.retryDelay,
          retryBackoff: j.retryBackoff,
          expireInSeconds: ACTION_EXPIRE_SECONDS,
        })),
        on(db) as PgBoss.InsertOptions,
      );
      if (kicksOn) await db.$client.query(`select pg_notify('${KICK_CHANNEL}', $1)`, [actionQueueOf(op)]);
    },
    async decideLater(db, op, rows, seconds) {
      if (rows.length === 0) return;
      // One job per session among the rows (they were acted on together); its key is its own, since the
      // queue's `short` policy keeps one waiting job per key.
      const jobs: DueJob[] = groupBy(rows, (r) => `${r.tenant}/${r.session}`).map((g) => ({
        due: true,
        ids: g.map((r) => r.id),
        session: g[0]!.session,
        tenant: g[0]!.tenant,
      }));
      await boss.insert(
        jobs.map((data) => ({
          name: actionQueueOf(op),
          data,
          singletonKey: `due:${randomUUID()}`,
          startAfter: `${Math.max(0, seconds)} seconds`,
          retryLimit: 2,
          retryDelay: JOB_RETRY_DELAY,
          expireInSeconds: ACTION_EXPIRE_SECONDS,
        })),
        on(db) as PgBoss.InsertOptions,
      );
    },
  };
  return {
    boss,
    scheduler,
    enqueue,
    onDue(listener) {
      dueListeners.add(listener);
      return () => dueListeners.delete(listener);
    },
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
  /** Edge-triggered kicks (default true). Off = BOS-like pure polling, for the benchmark baseline. */
  kicks?: boolean;
  boss?: BossHandle;
}

export async function startEngine(deps: EngineDeps): Promise<EngineHandle> {
  const handle = deps.boss ?? (await startBoss(deps.url, deps.log, { kicks: deps.kicks }));
  const { boss, scheduler, enqueue } = handle;
  const workerIds = new Map<string, string>();
  // A killed process's ticks must not hold their stately queues until expiry (leases.ts).
  const leases = new TickLeases({ url: deps.url, log: deps.log, queuePrefix: ENGINE_QUEUES });

  /** What a tick or an action batch works with: the options and clock read now, the adapters configured from them. */
  const contextFor = async (actor: string, log: Logger): Promise<EngineContext> => {
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
  };

  /** This process's ticks while they decide: an action worker's gather window ends with its operator's tick. */
  const deciding = new Map<OperatorName, Promise<void>>();
  /** This process's latest tick jobs per operator: pg-boss shows them active a moment after they end. */
  const ownTicks = new Map<OperatorName, string[]>();
  for (const def of deps.operators) {
    const log = deps.log.child({ operator: def.name });
    const id = await work(boss, queueOf(def.name), { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
      let period = 15;
      const started = Date.now();
      const jobId = jobs[0]?.id;
      if (jobId) await leases.hold(jobId);
      if (jobId) ownTicks.set(def.name, [jobId, ...(ownTicks.get(def.name) ?? [])].slice(0, 4));
      let decided = () => {};
      deciding.set(def.name, new Promise<void>((r) => (decided = r)));
      try {
        const ctx = await contextFor(`operator:${def.name}`, log);
        period = def.period(ctx.options);
        await observeTick(def.name, () => def.run(ctx));
      } catch (e) {
        // A tick never crashes the loop: the error is logged and the next poll comes as usual.
        log.error({ err: errorText(e) }, 'operator tick failed');
      } finally {
        deciding.delete(def.name);
        decided();
        log.debug({ ms: Date.now() - started }, 'tick');
        if (period > 0) await scheduler.poll(def.name, period).catch((e) => log.warn({ err: errorText(e) }, 'could not schedule poll'));
        if (jobId) await leases.release(jobId);
      }
    });
    workerIds.set(def.name, id);
  }
  const timerWorker = await work<{ op: OperatorName }>(boss, TIMER_QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 50 }, async (jobs) => {
    await leases.holdAll(jobs.map((j) => j.id));
    try {
      // A wake or poll that came due runs its operator's tick; this process's worker fetches it at once.
      const ops = [...new Set(jobs.map((j) => j.data.op))];
      await enqueue(deps.db, ops);
      for (const op of ops) {
        const w = workerIds.get(op);
        if (w) boss.notifyWorker(w);
      }
    } finally {
      await leases.releaseAll(jobs.map((j) => j.id));
    }
  });
  // pg-boss looks for due timers every 0.5 s; a wake this process scheduled is looked for when it is
  // due, on this process's clock (a database clock ahead of it: the next regular look finds it).
  const dueTimers = new Map<number, NodeJS.Timeout>();
  const offDue = handle.onDue((due) => {
    if (dueTimers.has(due)) return;
    const t = setTimeout(
      () => {
        dueTimers.delete(due);
        boss.notifyWorker(timerWorker);
      },
      Math.max(0, due - Date.now()) + 5,
    );
    t.unref();
    dueTimers.set(due, t);
  });
  // A reaped tick is owed: run the operator again (reaped timers and action jobs are retried by pg-boss itself).
  await leases.start(boss, async (queues) => {
    const ops = OPERATORS.filter((op) => queues.includes(queueOf(op)));
    if (ops.length) await scheduler.kick(deps.db, ops).catch(() => {});
  });

  // The action queues: any number of worker processes drain them, a batch at a time.
  let stopped = false;
  const idlers = new Map<string, () => void>();
  /**
   * Queues whose kick came while their loop was not idle (fetching, acting): the next idle returns at
   * once. Without it, jobs committed while an empty fetch was on its way waited out the idle (500 ms per
   * hop of a reboot at 1,000 nodes).
   */
  const woken = new Set<string>();
  const idle = (queue: string, ms: number) =>
    new Promise<void>((resolve) => {
      if (woken.delete(queue)) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        idlers.delete(queue);
        resolve();
      }
      idlers.set(queue, done);
    });
  /**
   * Wait out the gather window if `op`'s tick is deciding: this process's until it ends (at most
   * GATHER_MS), another process's for GATHER_MS. False (no wait) when no tick of `op` runs.
   */
  const gatherFrom = async (op: OperatorName): Promise<boolean> => {
    const sleep = new Promise<void>((r) => setTimeout(r, GATHER_MS).unref());
    const own = deciding.get(op);
    if (own) {
      await Promise.race([own, sleep]);
      return true;
    }
    if (!(await otherActiveJobExists(boss.getDb(), queueOf(op), ownTicks.get(op) ?? []))) return false;
    await sleep;
    return true;
  };
  const drain = async (spec: JobSpec): Promise<void> => {
    const queue = actionQueueOf(spec.operator);
    const log = deps.log.child({ operator: spec.operator, queue });
    while (!stopped) {
      let jobs: FetchedJob[] = [];
      try {
        const ctx = await contextFor(`worker:${spec.operator}`, log);
        const size = ctx.options.max_component_batch_size > 0 ? ctx.options.max_component_batch_size : 10_000;
        // This fetch sees every job committed before it: the kicks so far are answered.
        woken.delete(queue);
        jobs = await fetchJobs(boss, queue, size);
        if (jobs.length === 0) {
          await idle(queue, 500);
          continue;
        }
        // A short gather window while the operator's tick is still deciding (here or in another
        // process): the rest of its decisions (its next pages) join this batch. A tick that is over
        // has no more to add, so the batch goes at once.
        if (jobs.length < size && (await gatherFrom(spec.operator))) {
          jobs.push(...(await fetchJobs(boss, queue, size - jobs.length)));
        }
        await leases.holdAll(jobs.map((j) => j.id));
        await runJobBatch(ctx, spec, jobs, (tx, endings) => endJobs(boss, bossDbOf(tx), queue, endings));
      } catch (e) {
        // Never a crashed loop: the batch's jobs are failed, so pg-boss retries them.
        log.error({ err: errorText(e), jobs: jobs.length }, 'action batch failed');
        if (jobs.length)
          await failJobs(
            boss,
            boss.getDb(),
            queue,
            jobs.map((j) => j.id),
            { error: errorText(e) },
            JOB_RETRY_MAX_DELAY,
          ).catch(() => {});
        if (!stopped) await idle(queue, 500);
      } finally {
        if (jobs.length) await leases.releaseAll(jobs.map((j) => j.id));
      }
    }
  };
  const drains = deps.operators.flatMap((d) => (d.jobs ? [drain(d.jobs)] : []));

  // Level-triggered safety net, kept even when a tick could not schedule its next poll (the database
  // was down when it ended): every process makes sure each operator has a poll waiting.
  const keepPolls = setInterval(async () => {
    try {
      const options = await getOptions(deps.db);
      for (const def of deps.operators) {
        const period = def.period(options);
        if (period > 0 && !stopped) await scheduler.poll(def.name, period);
      }
    } catch {
      /* database unavailable: next round */
    }
  }, POLL_KEEPER_MS);

  // Kicks from any process: this process's worker for that operator fetches at once. The connection is
  // re-made when it drops (Postgres restarted); meanwhile pg-boss's 0.5 s fetch loop still finds the ticks.
  let listener: pg.Client | undefined;
  let relisten: NodeJS.Timeout | undefined;
  let listenBackoffMs = 200;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: sessionUrlOf(deps.url), application_name: 'bootorch-kick-listener' });
    client.on('notification', (n) => {
      for (const op of (n.payload ?? '').split(',')) {
        if (op.startsWith(ACTION_QUEUE_PREFIX)) {
          const wake = idlers.get(op);
          if (wake) wake();
          else woken.add(op);
        }
        const w = workerIds.get(op as OperatorName);
        if (w) boss.notifyWorker(w);
      }
    });
    client.on('error', (e) => deps.log.warn({ err: errorText(e) }, 'kick listener lost; polling until it is back'));
    client.on('end', () => {
      if (listener === client) listener = undefined;
      if (stopped || relisten) return;
      relisten = setTimeout(() => {
        relisten = undefined;
        listenBackoffMs = Math.min(listenBackoffMs * 2, 5000);
        // Kicks sent while it was down went unheard: tick every operator once.
        void listen()
          .then(() => {
            if (listener)
              return scheduler.kick(
                deps.db,
                deps.operators.map((d) => d.name),
              );
          })
          .catch(() => {});
      }, listenBackoffMs);
    });
    try {
      await client.connect();
      await client.query(`listen ${KICK_CHANNEL}`);
      listener = client;
      listenBackoffMs = 200;
    } catch (e) {
      deps.log.warn({ err: errorText(e) }, 'kick listener unavailable; polling until it is back');
      await client.end().catch(() => {});
    }
  };
  if (deps.kicks !== false) await listen();

  // Start every loop now: one tick each (stately: a no-op for operators already queued).
  await enqueue(
    deps.db,
    deps.operators.map((d) => d.name),
  );

  return {
    scheduler,
    healthy: () => databaseHealthy(deps.db),
    async stop() {
      stopped = true;
      offDue();
      for (const t of dueTimers.values()) clearTimeout(t);
      for (const wake of [...idlers.values()]) wake();
      await Promise.all(drains);
      clearInterval(keepPolls);
      clearTimeout(relisten);
      await listener?.end().catch(() => {});
      await leases.stop();
      for (const def of deps.operators) await boss.offWork(queueOf(def.name)).catch(() => {});
      await boss.offWork(TIMER_QUEUE).catch(() => {});
      if (!deps.boss) await handle.stop();
    },
  };
}
