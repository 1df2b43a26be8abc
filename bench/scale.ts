/**
 * One reboot of N simulated nodes with instant hardware and instant configuration, from
 * createSession to session complete, measured: wall time, rows written, jobs run, peak RSS, and the
 * share of wall time spent waiting on PostgreSQL.
 */
import pg from 'pg';
import pino from 'pino';
import { connect, runMigrations, type Connection, type Db } from '../src/db/client.ts';
import { SimWorld } from '../src/sim/world.ts';
import { createSimAdapters } from '../src/adapters/factory.ts';
import { startEngine } from '../src/engine/runtime.ts';
import { createOperators } from '../src/operators/index.ts';
import { createReportBatcher } from '../src/engine/reports.ts';
import type { Options } from '../src/domain/options.ts';
import { INSTANT_TIMING } from '../src/sim/role.ts';
import { jobsCompleted } from '../src/observability/metrics.ts';
import { ACTION_QUEUE_PREFIX, ENGINE_QUEUES } from '../src/engine/queue/names.ts';
import { bossDbOf, heldJobCount } from '../src/engine/queue/jobs.ts';

export interface ScaleResult {
  nodes: number;
  wallMs: number;
  nodesPerSecond: number;
  rowsWritten: number;
  jobsRun: number;
  peakRssMb: number;
  dbTimeShare: number;
  failed: number;
}

export const INSTANT = INSTANT_TIMING;

export async function freshDatabase(adminUrl: string, name: string): Promise<Connection> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const conn = connect(u.toString(), { max: 20 });
  await runMigrations(conn.db);
  return conn;
}

/**
 * Wraps every connection's query to add up the time spent waiting on the database and the rows the
 * application's statements wrote (INSERT/UPDATE/DELETE row counts; pg-boss's own pool is separate and
 * counted as jobs).
 */
function meter(pool: pg.Pool): { dbMs(): number; rows(): number } {
  let ms = 0;
  let rows = 0;
  const wrap = (client: { query: (...a: unknown[]) => unknown }) => {
    const orig = client.query.bind(client) as (...a: unknown[]) => unknown;
    client.query = (...args: unknown[]) => {
      const t = performance.now();
      const p = orig(...args);
      if (!(p instanceof Promise)) return p;
      return p.then(
        (r: any) => {
          ms += performance.now() - t;
          if (r && /^(INSERT|UPDATE|DELETE)$/.test(r.command)) rows += r.rowCount ?? 0;
          return r;
        },
        (e) => {
          ms += performance.now() - t;
          throw e;
        },
      );
    };
  };
  pool.on('connect', (c) => wrap(c as never));
  return { dbMs: () => ms, rows: () => rows };
}

/**
 * Jobs so far: those pg-boss holds (engine/queue/jobs.ts), and the action jobs this process completed
 * (the engine deletes an action job when it completes it; engine/action-jobs.ts), counted by its metrics.
 */
async function jobs(db: Db): Promise<number> {
  const held = await heldJobCount(bossDbOf(db), ENGINE_QUEUES);
  const completed = (await jobsCompleted.get()).values.filter((v) => String(v.labels.queue).startsWith(ACTION_QUEUE_PREFIX));
  return held + completed.reduce((a, v) => a + v.value, 0);
}

export interface ScaleHooks {
  /** Everything is set up, the session not yet created (start clients, subscribers). */
  ready?(conn: Connection): Promise<void>;
  /** The session completed (stop clients). */
  finished?(): Promise<void>;
}

export async function runScale(
  adminUrl: string,
  nodes: number,
  o: { options?: Partial<Options>; timeoutMs?: number; hooks?: ScaleHooks; tag?: string } = {},
): Promise<ScaleResult> {
  const conn = await freshDatabase(adminUrl, `bootorch_bench_${nodes}_k${o.tag ?? ''}`);
  const options = { polling_frequency: 15, max_component_batch_size: 2800, ...o.options };
  await conn.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(options)]);
  const world = new SimWorld({ nodes, seed: 7, initial: { booted: true, desiredConfig: 'compute-cfg' }, ...INSTANT });
  const adapters = createSimAdapters(world);
  await conn.pool.query(`insert into components (id, last_action) select unnest($1::text[]), 'newly_discovered'`, [world.ids()]);
  await conn.pool.query(`insert into session_templates (name, cfs_configuration, boot_sets) values ('t', 'compute-cfg', $1)`, [
    JSON.stringify({ compute: { path: world.defaultImage.manifest, type: 's3', arch: 'X86', node_roles_groups: ['Compute'] } }),
  ]);
  const log = pino({ level: process.env.BENCH_LOG ?? 'silent' });
  const m = meter(conn.pool);
  const engine = await startEngine({ url: conn.url, db: conn.db, adapters, operators: createOperators(), log });
  const reports = createReportBatcher(conn.db, engine.scheduler);
  world.setReportHandler(async (id, token) => {
    const r = await reports.report({ id, token, actor: `node:${id}` });
    if (!r.ok) throw new Error(r.message);
  });
  // Let the start-up ticks settle so they are not counted.
  await new Promise((r) => setTimeout(r, 1500));
  await o.hooks?.ready?.(conn);
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  const w0 = m.rows();
  const j0 = await jobs(conn.db);
  const db0 = m.dbMs();
  const t0 = performance.now();
  const c = await conn.pool.connect();
  await c.query('begin');
  await c.query(`insert into sessions (name, operation, template_name) values ('bench', 'reboot', 't')`);
  await c.query('commit');
  c.release();
  await engine.scheduler.kick(conn.db, ['session-setup']);
  const deadline = Date.now() + (o.timeoutMs ?? 15 * 60_000);
  for (;;) {
    const r = await conn.pool.query(`select status from sessions where name = 'bench'`);
    if (r.rows[0]?.status === 'complete') break;
    if (Date.now() > deadline) throw new Error(`reboot of ${nodes} nodes did not complete in time`);
    await new Promise((res) => setTimeout(res, 10));
  }
  const wallMs = performance.now() - t0;
  await o.hooks?.finished?.();
  const dbMs = m.dbMs() - db0;
  const rowsWritten = m.rows() - w0;
  clearInterval(sampler);
  const failed = Number((await conn.pool.query(`select count(*) from components where status = 'failed'`)).rows[0].count);
  const result: ScaleResult = {
    nodes,
    wallMs,
    nodesPerSecond: nodes / (wallMs / 1000),
    rowsWritten,
    jobsRun: (await jobs(conn.db)) - j0,
    peakRssMb: peakRss / 1024 / 1024,
    dbTimeShare: Math.min(1, dbMs / wallMs),
    failed,
  };
  world.close();
  await engine.stop();
  await conn.close();
  return result;
}
