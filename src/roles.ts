/**
 * The composition root: each role wires the database, the queue, the adapters, the engine and the
 * API from the validated configuration. `dev` runs them all in one process on an embedded PostgreSQL
 * with a simulated cluster, so `npm start` is a working system.
 */
import http from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { tlsFromConfig, type Config } from './config.ts';
import { connect, runMigrations, type Connection } from './db/client.ts';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.ts';
import { startBoss, startEngine, type BossHandle, type EngineHandle } from './engine/runtime.ts';
import { createAdapters, createSimAdapters } from './adapters/factory.ts';
import { SimWorld } from './sim/world.ts';
// The API (Apollo, express, the schema) and the operators are imported by the roles that run them, so a
// worker does not load the API's modules nor an api replica the operators' (BENCHMARKS.md, Start-up).
import type { ApiServer, ApiServerOptions } from './api/server.ts';
import { surviveDatabaseOutages } from './db/outage.ts';
import { bootGrantPruner } from './db/boot-grants.ts';
import { createReportBatcher, type ReportBatcher } from './engine/reports.ts';
import type { Scheduler } from './engine/scheduler.ts';
import { createLogger } from './observability/logging.ts';
import { startProcessMetrics } from './observability/metrics.ts';
import { startTracing } from './observability/tracing.ts';
import { instrumentAdapters } from './observability/ports.ts';
import { observeReports } from './observability/reports.ts';
import { collectSystemState } from './observability/collectors.ts';
import { EngineHeartbeat } from './engine/heartbeat.ts';
import { serveMetrics } from './observability/http.ts';
import { devSecretKey, secretKeyFrom } from './adapters/standalone/secrets.ts';
import { ConsoleCapture } from './consoles/capture.ts';

export interface Stoppable {
  stop(): Promise<void>;
}

type Role = 'api' | 'worker' | 'dev';

/**
 * Per role: its logger (the process's boot grant pruner tells its failures there), its process metrics
 * and, when an OTLP endpoint is configured, tracing.
 */
export function observe(config: Config, role: Role): Logger {
  startProcessMetrics(role);
  startTracing(role);
  const log = createLogger({ level: config.LOG_LEVEL, role });
  bootGrantPruner.logTo(log);
  return log;
}

/** A plain logger for client commands that open the database (bootorch token). */
export const logger = (config: Config): Logger => createLogger({ level: config.LOG_LEVEL, role: 'cli' });

/** DATABASE_URL, or an embedded PostgreSQL under BOOTORCH_DATA_DIR with a `bootorch` database. */
export async function openDatabase(config: Config, log: Logger): Promise<{ conn: Connection; embedded?: EmbeddedServer }> {
  let url = config.DATABASE_URL;
  let embedded: EmbeddedServer | undefined;
  if (!url) {
    log.info({ dir: config.BOOTORCH_DATA_DIR, port: config.EMBEDDED_PG_PORT }, 'starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.BOOTORCH_DATA_DIR, config.EMBEDDED_PG_PORT, (m) => log.debug(m));
    await ensureDatabase(embedded.url('postgres'), 'bootorch');
    url = embedded.url('bootorch');
  }
  const conn = connect(url, {
    max: 20,
    // Only DATABASE_URL may be a transaction-mode pooler; the embedded database never is.
    sessionUrl: config.DATABASE_URL ? config.DATABASE_SESSION_URL : undefined,
    namedStatements: config.BOOTORCH_NAMED_STATEMENTS,
  });
  await runMigrations(conn.db);
  return { conn, embedded };
}

/** Where `dev` keeps its admin token (0600) for the CLI on the same machine. */
export const devTokenFile = (config: Config) => path.join(config.BOOTORCH_DATA_DIR, 'dev-admin-token');

/**
 * Everything in one process: embedded Postgres, simulated cluster, engine, API. Auth is on, in dev
 * mode by default: the admin token is printed and kept in devTokenFile.
 */
export async function runDev(config: Config): Promise<Stoppable & { api: ApiServer; devAdminToken?: string }> {
  const log = observe(config, 'dev');
  surviveDatabaseOutages(log);
  const modules = Promise.all([import('./api/server.ts'), import('./api/auth.ts'), import('./operators/index.ts'), import('./seed.ts')]);
  const { conn, embedded } = await openDatabase(config, log);
  const world = new SimWorld({
    nodes: config.SIM_NODES,
    seed: config.SIM_SEED,
    river: true,
    armFraction: 0.125,
    locked: [],
    disabled: [],
    initial: { booted: true, desiredConfig: 'compute-cfg', configured: true },
    // Slow enough to watch, fast enough not to wait: hardware in seconds, not minutes.
    powerOnDelayMs: 1500,
    powerOffDelayMs: 1000,
    forceOffDelayMs: 300,
    bootDelayMs: 2000,
    batcher: { batchSize: 25, batchWindowMs: 1000, checkIntervalMs: 500, runTimeMs: 1500 },
  });
  const adapters = instrumentAdapters(createSimAdapters(world), log);
  const [{ startApiServer }, { apiAuthFromEnv }, { createOperators }, { seedDemo }] = await modules;
  const boss = await startBoss(conn.url, log);
  const operators = createOperators();
  const engine = await startEngine({
    url: conn.url,
    db: conn.db,
    adapters,
    operators,
    log,
    boss,
  });
  const reports = reportBatcher(conn.db, engine.scheduler, log, world);
  const state = collectSystemState(conn.db);
  const heartbeat = new EngineHeartbeat(conn.db, 'dev', log);
  await heartbeat.start();
  await seedDemo(conn, world, log);
  const auth = await apiAuthFromEnv(conn.db, { defaultMode: 'dev', devTokenFile: devTokenFile(config), logger: log });
  const api = await startApiServer({
    db: conn.db,
    scheduler: engine.scheduler,
    port: config.PORT,
    host: config.HOST,
    logger: log,
    queueHealthy: engine.healthy,
    images: adapters.images,
    adapters,
    reports,
    auth,
    tls: tlsFromConfig(config),
    ...edgeOptions(config),
    wsDeflate: config.BOOTORCH_WS_DEFLATE,
    secretKey: secretKeyFrom(config) ?? devSecretKey(config.BOOTORCH_DATA_DIR),
  });
  return {
    api,
    devAdminToken: auth.authenticator.devAdminToken,
    async stop() {
      state.stop();
      await heartbeat.stop();
      world.close();
      await api.close();
      await auth.limiter?.close?.();
      await engine.stop();
      await boss.stop();
      await conn.close();
      await embedded?.stop();
    },
  };
}

/** The API role: serves GraphQL and enqueues work; runs no operator. Auth: BOOTORCH_AUTH_MODE, default `tokens`. */
export async function runApi(config: Config): Promise<Stoppable & { api: ApiServer }> {
  const log = observe(config, 'api');
  surviveDatabaseOutages(log);
  // Loaded while the database is opened.
  const modules = Promise.all([import('./api/server.ts'), import('./api/auth.ts'), import('./api/boot/standalone.ts')]);
  const { conn, embedded } = await openDatabase(config, log);
  const [{ startApiServer }, { apiAuthFromEnv }, { standaloneApi }] = await modules;
  const boss = await startBoss(conn.url, log);
  // With BOOTORCH_ADAPTERS=sim the simulated cluster lives in the worker; a world here would be another
  // machine, so the dry run and explain need BOOTORCH_ADAPTERS=http or standalone (or the dev role).
  const adapters =
    config.BOOTORCH_ADAPTERS !== 'sim' ? createAdapters(config, undefined, { db: conn.db, runHooks: false, logger: log }) : undefined;
  const reports = reportBatcher(conn.db, boss.scheduler, log);
  const auth = await apiAuthFromEnv(conn.db, { defaultMode: 'tokens', devTokenFile: devTokenFile(config), logger: log });
  // The database-wide gauges from every replica too, so the engine's absence is seen (no worker, no gauges before).
  const state = collectSystemState(conn.db);
  const api = await startApiServer({
    db: conn.db,
    scheduler: boss.scheduler,
    port: config.PORT,
    host: config.HOST,
    logger: log,
    queueHealthy: async () => true,
    images: adapters?.images,
    adapters,
    reports,
    auth,
    tls: tlsFromConfig(config),
    ...edgeOptions(config),
    wsDeflate: config.BOOTORCH_WS_DEFLATE,
    secretKey: secretKeyFrom(config),
    ...standaloneApi(config, conn.db, log),
  });
  return {
    api,
    async stop() {
      state.stop();
      await api.close();
      await auth.limiter?.close?.();
      await adapters?.close?.();
      await boss.stop();
      await conn.close();
      await embedded?.stop();
    },
  };
}

/**
 * The process's report batcher (engine/reports.ts), measured; the nodes of a simulated cluster in this
 * process report through it too, as real nodes do through the API.
 */
function reportBatcher(db: Connection['db'], scheduler: Scheduler, log: Logger, world?: SimWorld): ReportBatcher {
  const reports = observeReports(createReportBatcher(db, scheduler));
  world?.setReportHandler(async (id, token) => {
    const r = await reports.report({ id, token, actor: `node:${id}` }, log);
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  });
  return reports;
}

/** What is exposed and to whom (README "Exposure"): a separate /metrics listener, trusted proxies. */
function edgeOptions(config: Config): Pick<ApiServerOptions, 'metricsListen' | 'trustProxy'> {
  return {
    metricsListen:
      config.BOOTORCH_METRICS_PORT === undefined ? undefined : { port: config.BOOTORCH_METRICS_PORT, host: config.BOOTORCH_METRICS_HOST },
    trustProxy: config.BOOTORCH_TRUST_PROXY,
  };
}

/** The worker role: every operator on pg-boss, against the configured adapters. */
export async function runWorker(config: Config, healthPort?: number): Promise<Stoppable & { engine: EngineHandle }> {
  const log = observe(config, 'worker');
  surviveDatabaseOutages(log);
  const operatorsModule = import('./operators/index.ts');
  const { conn, embedded } = await openDatabase(config, log);
  const adapters = createAdapters(config, undefined, { db: conn.db, logger: log });
  const boss: BossHandle = await startBoss(conn.url, log);
  const operators = (await operatorsModule).createOperators();
  const engine = await startEngine({
    url: conn.url,
    db: conn.db,
    adapters,
    operators,
    log,
    boss,
  });
  // A simulated cluster carried by the worker reports through this process's batcher.
  if (adapters.world) reportBatcher(conn.db, engine.scheduler, log, adapters.world);
  const state = collectSystemState(conn.db);
  const heartbeat = new EngineHeartbeat(conn.db, 'worker', log);
  await heartbeat.start();
  const consoles =
    config.BOOTORCH_ADAPTERS === 'standalone'
      ? new ConsoleCapture(conn.db, {
          secretKey: secretKeyFrom(config),
          log,
          sol: { binary: config.BOOTORCH_IPMITOOL },
          // SerialConsole is read as the power calls read: the BMC CA, the timeout, and their guard (one call per BMC).
          redfish: adapters.bmcs?.redfish,
          guard: adapters.bmcs?.guard,
        })
      : undefined;
  consoles?.start();
  const health = healthPort ? await healthServer(healthPort, config.HOST, engine.healthy) : undefined;
  log.info({ adapters: config.BOOTORCH_ADAPTERS, operators: operators.length }, 'worker running');
  return {
    engine,
    async stop() {
      health?.close();
      await consoles?.stop();
      state.stop();
      await heartbeat.stop();
      await engine.stop();
      await adapters.close?.();
      await boss.stop();
      adapters.world?.close();
      await conn.close();
      await embedded?.stop();
    },
  };
}

/** The worker's listener: GET /metrics (observability/http.ts), anything else is the health answer. */
function healthServer(port: number, host: string, healthy: () => Promise<boolean>): Promise<http.Server> {
  const server = http.createServer(async (req, res) => {
    if (serveMetrics(req, res)) return;
    const ok = await healthy();
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}
