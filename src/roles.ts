/**
 * The composition root: each role wires the database, the queue, the adapters, the engine and the
 * API from the validated configuration. `dev` runs them all in one process on an embedded PostgreSQL
 * with a simulated cluster, so `npm start` is a working system.
 */
import http from 'node:http';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';
import { connect, runMigrations, type Connection } from './db/client.ts';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.ts';
import { startBoss, startEngine, type BossHandle, type EngineHandle } from './engine/runtime.ts';
import { ALL_OPERATORS } from './operators/index.ts';
import { createAdapters, createSimAdapters } from './adapters/factory.ts';
import { SimWorld } from './sim/world.ts';
import { startApiServer, type ApiServer } from './api/server.ts';
import { apiAuthFromEnv } from './api/auth.ts';
import { surviveDatabaseOutages } from './db/outage.ts';
import { createReportBatcher } from './db/queries/report-batch.ts';
import { seedDemo } from './seed.ts';

export interface Stoppable { stop(): Promise<void> }

export function logger(config: Config): Logger {
  return pino({ level: config.LOG_LEVEL, base: { pid: process.pid } });
}

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
  const conn = connect(url, { max: 20 });
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
  const log = logger(config);
  surviveDatabaseOutages(log);
  const { conn, embedded } = await openDatabase(config, log);
  const world = new SimWorld({
    nodes: config.SIM_NODES, seed: config.SIM_SEED, river: true, armFraction: 0.125,
    locked: [], disabled: [], initial: { booted: true, desiredConfig: 'compute-cfg', configured: true },
    // Slow enough to watch, fast enough not to wait: hardware in seconds, not minutes.
    powerOnDelayMs: 1500, powerOffDelayMs: 1000, forceOffDelayMs: 300, bootDelayMs: 2000,
    batcher: { batchSize: 25, batchWindowMs: 1000, checkIntervalMs: 500, runTimeMs: 1500 },
  });
  const adapters = createSimAdapters(world);
  const boss = await startBoss(conn.url, log, { kicks: config.BOOTORCH_KICKS });
  const engine = await startEngine({ url: conn.url, pool: conn.pool, adapters, operators: ALL_OPERATORS, log, boss, kicks: config.BOOTORCH_KICKS });
  const reports = createReportBatcher(conn.pool, engine.kicker);
  world.setReportHandler(async (id, token) => {
    const r = await reports.report({ id, token, actor: `node:${id}` });
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  });
  await seedDemo(conn, world, log);
  const auth = await apiAuthFromEnv(conn.db, { defaultMode: 'dev', devTokenFile: devTokenFile(config) });
  const api = await startApiServer({
    pool: conn.pool, db: conn.db, kicker: engine.kicker, port: config.PORT, host: config.HOST, logger: log,
    queueHealthy: engine.healthy, images: adapters.images, adapters, reports, auth, wsDeflate: config.BOOTORCH_WS_DEFLATE,
  });
  return {
    api,
    devAdminToken: auth.authenticator.devAdminToken,
    async stop() {
      world.close();
      await api.close();
      await engine.stop();
      await boss.stop();
      await conn.close();
      await embedded?.stop();
    },
  };
}

/** The API role: serves GraphQL and enqueues work; runs no operator. Auth: BOOTORCH_AUTH_MODE, default `tokens`. */
export async function runApi(config: Config): Promise<Stoppable & { api: ApiServer }> {
  const log = logger(config);
  surviveDatabaseOutages(log);
  const { conn, embedded } = await openDatabase(config, log);
  const boss = await startBoss(conn.url, log, { kicks: config.BOOTORCH_KICKS });
  // With BOOTORCH_ADAPTERS=sim the simulated cluster lives in the worker; a world here would be another
  // machine, so the dry run and explain need BOOTORCH_ADAPTERS=http (or the dev role).
  const adapters = config.BOOTORCH_ADAPTERS === 'http' ? createAdapters(config) : undefined;
  const reports = createReportBatcher(conn.pool, boss.kicker);
  const auth = await apiAuthFromEnv(conn.db, { defaultMode: 'tokens', devTokenFile: devTokenFile(config) });
  const api = await startApiServer({
    pool: conn.pool, db: conn.db, kicker: boss.kicker, port: config.PORT, host: config.HOST, logger: log,
    queueHealthy: async () => true, images: adapters?.images, adapters, reports, auth, wsDeflate: config.BOOTORCH_WS_DEFLATE,
  });
  return {
    api,
    async stop() { await api.close(); await boss.stop(); await conn.close(); await embedded?.stop(); },
  };
}

/** The worker role: every operator on pg-boss, against the configured adapters. */
export async function runWorker(config: Config, healthPort?: number): Promise<Stoppable & { engine: EngineHandle }> {
  const log = logger(config);
  surviveDatabaseOutages(log);
  const { conn, embedded } = await openDatabase(config, log);
  const adapters = createAdapters(config);
  const boss: BossHandle = await startBoss(conn.url, log, { kicks: config.BOOTORCH_KICKS });
  const engine = await startEngine({ url: conn.url, pool: conn.pool, adapters, operators: ALL_OPERATORS, log, boss, kicks: config.BOOTORCH_KICKS });
  if (adapters.world) {
    const world = adapters.world;
    const reports = createReportBatcher(conn.pool, engine.kicker);
    world.setReportHandler(async (id, token) => {
      const r = await reports.report({ id, token, actor: `node:${id}` });
      if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    });
  }
  const health = healthPort ? await healthServer(healthPort, config.HOST, engine.healthy) : undefined;
  log.info({ adapters: config.BOOTORCH_ADAPTERS, operators: ALL_OPERATORS.length }, 'worker running');
  return {
    engine,
    async stop() {
      health?.close();
      await engine.stop();
      await boss.stop();
      adapters.world?.close();
      await conn.close();
      await embedded?.stop();
    },
  };
}

function healthServer(port: number, host: string, healthy: () => Promise<boolean>): Promise<http.Server> {
  const server = http.createServer(async (_req, res) => {
    const ok = await healthy();
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
  });
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}
