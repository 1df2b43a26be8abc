/**
 * The engine on pg-boss. Each operator is a `stately` queue (at most one tick waiting and one
 * running, across every worker process), so ticks never overlap and a burst of kicks is one tick.
 * Everything that starts a tick goes through the Scheduler (engine/scheduler.ts): writes kick in
 * their transaction, waits are wakes (timer jobs with startAfter that kick their operator when due),
 * and every tick ends by asking for its next poll. The process also keeps the polls alive (a tick
 * that could not ask for its poll), kicks the operators whose ticks the reaper freed, and kicks every
 * operator after its NOTIFY listener reconnects; each of these is a scheduler call.
 */
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { OPERATORS, type OperatorName, type Scheduler } from './scheduler.ts';
import type { EngineContext, OperatorDef } from './operator.ts';
import type { Adapters } from '../adapters/ports.ts';
import { getOptions } from '../db/options.ts';
import { databaseHealthy } from '../db/client.ts';
import { errorText } from './outcome.ts';
import { databaseClock } from './clock.ts';
import { TickLeases } from './leases.ts';
import { observeJobs, observeTick } from '../observability/engine.ts';

const QUEUE_PREFIX = 'bootorch-op-';
/** Every queue of the engine (operator ticks and timers) starts with this: their active jobs are leased. */
const ENGINE_QUEUES = 'bootorch-';
/** How often each process makes sure every operator has its next poll scheduled (ms). */
const POLL_KEEPER_MS = 10_000;
const TIMER_QUEUE = 'bootorch-timer';
const KICK_CHANNEL = 'bootorch_kick';
const BOSS_SETUP_LOCK = 727_002;

export const queueOf = (op: OperatorName) => `${QUEUE_PREFIX}${op}`;

export interface BossHandle {
  boss: PgBoss;
  scheduler: Scheduler;
  /** Enqueue ticks and tell every worker, even with kicks off (a timer came due; the engine starts). */
  enqueue(db: Db, ops: readonly OperatorName[]): Promise<void>;
  stop(): Promise<void>;
}

/** pg-boss's `db` option: its SQL runs on this handle (inside the handle's transaction, if any). */
const on = (db: Db) => ({ db: { executeSql: (text: string, values?: unknown[]) => db.$client.query(text, values as unknown[]) } });

/** Start pg-boss and create the queues. Used by API processes too (they only enqueue). */
export async function startBoss(url: string, log: Logger, opts: { kicks?: boolean; max?: number } = {}): Promise<BossHandle> {
  const boss = new PgBoss({
    connectionString: url,
    max: opts.max ?? 4,
    application_name: 'bootorch-boss',
    maintenanceIntervalSeconds: 120,
  });
  observeJobs(boss);
  boss.on('error', (e: any) => {
    // Two processes racing for a stately tick: the loser's fetch hits the unique index. Harmless.
    if (e?.code === '23505') return;
    log.warn({ err: errorText(e) }, 'pg-boss error');
  });
  // Processes starting together (replicas, a worker) would race to create pg-boss's schema and queues
  // and deadlock; a session advisory lock makes them take turns.
  const lock = new pg.Client({ connectionString: url, application_name: 'bootorch-boss-setup' });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [BOSS_SETUP_LOCK]);
    await boss.start();
    for (const op of OPERATORS) {
      await boss.createQueue(queueOf(op), { name: queueOf(op), policy: 'stately', retryLimit: 0, expireInSeconds: 3600 });
    }
    await boss.createQueue(TIMER_QUEUE, { name: TIMER_QUEUE, policy: 'short', retryLimit: 2, retryDelay: 1, expireInSeconds: 60 });
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
  const scheduler: Scheduler = {
    kick: (db, ops) => (kicksOn ? enqueue(db, ops) : Promise.resolve()),
    async wakeAt(db, op, at) {
      // The key names the second it is due, so many wakes for one moment are one timer job.
      const due = Math.ceil(at.getTime() / 1000);
      await boss.send(TIMER_QUEUE, { op }, {
        ...on(db),
        startAfter: new Date(due * 1000),
        singletonKey: `wake:${op}@${due}`,
      } as PgBoss.SendOptions);
    },
    async poll(op, seconds) {
      // Relative: pg-boss adds it to the database's now(); one pending poll per operator.
      await boss.send(TIMER_QUEUE, { op }, { startAfter: Math.max(0.5, seconds), singletonKey: `poll:${op}` });
    },
  };
  return { boss, scheduler, enqueue, stop: () => boss.stop({ graceful: true, wait: true, timeout: 10_000 }) };
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

  for (const def of deps.operators) {
    const log = deps.log.child({ operator: def.name });
    const id = await boss.work(queueOf(def.name), { pollingIntervalSeconds: 0.5, batchSize: 1 }, async (jobs) => {
      let period = 15;
      const started = Date.now();
      const jobId = jobs[0]?.id;
      if (jobId) await leases.hold(jobId);
      try {
        const options = await getOptions(deps.db);
        const now = await databaseClock(deps.db);
        period = def.period(options);
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
        const ctx: EngineContext = { db: deps.db, adapters: deps.adapters, options, now, log, scheduler, actor: `operator:${def.name}` };
        await observeTick(def.name, () => def.run(ctx));
      } catch (e) {
        // A tick never crashes the loop: the error is logged and the next poll comes as usual.
        log.error({ err: errorText(e) }, 'operator tick failed');
      } finally {
        log.debug({ ms: Date.now() - started }, 'tick');
        if (period > 0) await scheduler.poll(def.name, period).catch((e) => log.warn({ err: errorText(e) }, 'could not schedule poll'));
        if (jobId) await leases.release(jobId);
      }
    });
    workerIds.set(def.name, id);
  }
  await boss.work(TIMER_QUEUE, { pollingIntervalSeconds: 0.5, batchSize: 50 }, async (jobs) => {
    for (const j of jobs) await leases.hold(j.id);
    try {
      // A wake or poll that came due runs its operator's tick; this process's worker fetches it at once.
      const ops = [...new Set(jobs.map((j) => (j.data as { op: OperatorName }).op))];
      await enqueue(deps.db, ops);
      for (const op of ops) {
        const w = workerIds.get(op);
        if (w) boss.notifyWorker(w);
      }
    } finally {
      for (const j of jobs) await leases.release(j.id);
    }
  });
  // A reaped tick is owed: run the operator again (reaped timers are retried by pg-boss itself).
  await leases.start(boss, async (queues) => {
    const ops = OPERATORS.filter((op) => queues.includes(queueOf(op)));
    if (ops.length) await scheduler.kick(deps.db, ops).catch(() => {});
  });

  // Level-triggered safety net, kept even when a tick could not schedule its next poll (the database
  // was down when it ended): every process makes sure each operator has a poll waiting.
  let stopped = false;
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
    const client = new pg.Client({ connectionString: deps.url, application_name: 'bootorch-kick-listener' });
    client.on('notification', (n) => {
      for (const op of (n.payload ?? '').split(',')) {
        const w = workerIds.get(op);
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
