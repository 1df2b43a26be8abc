/**
 * The path real sites take: the same reboot as the in-process bench (scale.ts: instant hardware and
 * configuration, the same options), but `bootorch sim` in its own process serving HSM, PCS, BSS, CFS
 * and S3 over HTTP, its nodes reporting over HTTP with their own node tokens, to one or two `bootorch
 * api` processes (nodes spread over both URLs), and a `bootorch worker` with BOOTORCH_ADAPTERS=http.
 * Measured: createSession to session complete, and the first to the last accepted report.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startRole, type RoleProcess } from '../test/helpers/processes.ts';
import { createApiToken, hashApiToken } from '../src/auth/api-tokens.ts';
import { freshDatabase } from './scale.ts';
import { cpuSeconds, machineCpuSeconds } from './api-load.ts';
import type { Connection } from '../src/db/client.ts';

/**
 * Node's arguments for a bench's role process: PROF=sim,api,worker asks for a CPU profile of those
 * roles in /tmp/prof-<role> (written when they stop); SIM_PROF=1 is PROF=sim.
 */
export function profileArgs(role: string): string[] {
  const profiled = new Set([...(process.env.PROF ?? '').split(','), ...(process.env.SIM_PROF ? ['sim'] : [])]);
  return profiled.has(role) ? ['--cpu-prof', `--cpu-prof-dir=/tmp/prof-${role}`] : [];
}

export interface RealPathResult {
  nodes: number;
  replicas: number;
  wallMs: number;
  /** First to last accepted report of the session. */
  reportSpanMs: number;
  reports: number;
  /** Reports the simulator's nodes had refused (409 while mid-transition, or errors) and retried. */
  refused: number;
  /** Distinct nodes that reported, and the stable ones at the end. */
  reported: number;
  stable: number;
  load: number;
  /** Timeline from createSession, ms: the last action event (power calls done), the first and last accepted report. */
  timeline: { lastActionMs: number; firstReportMs: number; lastReportMs: number };
  /**
   * CPU seconds (user + system) each process used from createSession to completion; `rest`: the rest of
   * the machine (PostgreSQL, and this bench process polling for completion; nothing else runs beside).
   */
  cpu: { sim: number; api: number; worker: number; rest: number };
  /** The worker's status passes during the reboot and the components they read, full passes and changed-only ones. */
  statusPasses: PassCounts;
  statusRowsRead: PassCounts;
  /** Jobs the workers' lease reapers failed as a dead process's (their warn lines): 0 unless a live one's were taken for dead. */
  reaped: number;
}

/** A counter of a Prometheus text exposition, by its `pass` label. */
type PassCounts = { full: number; transit: number; changed: number };

function byPass(metrics: string, name: string): PassCounts {
  const v = (pass: string) => Number(new RegExp(`^${name}\\{[^}]*pass="${pass}"[^}]*\\} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
  return { full: v('full'), transit: v('transit'), changed: v('changed') };
}

/** `n` distinct ports that were free a moment ago (all held open until every one is picked). */
async function freePorts(n: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer()
            .once('error', reject)
            .listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = held.map((s) => (s.address() as { port: number }).port);
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

async function until<T>(f: () => Promise<T | undefined | false>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`real path: ${what} not reached within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What a caller may look at before the processes stop (the replica test). */
export interface RealPathStack {
  conn: Connection;
  apiUrls: string[];
  adminToken: string;
  simUrl: string;
}

export async function runRealPath(
  adminUrl: string,
  nodes: number,
  o: {
    replicas?: number;
    /** `bootorch worker` processes (default 1). */
    workers?: number;
    /** The simulator's --fault specs (e.g. `bss:slowMs=1000`: a slowed service). */
    faults?: string[];
    /** max_component_batch_size (default 2800, as the in-process bench). */
    batchSize?: number;
    tag?: string;
    inspect?(s: RealPathStack): Promise<void>;
    /** The workers' extra environment. */
    workerEnv?: Record<string, string>;
  } = {},
): Promise<RealPathResult> {
  const replicas = o.replicas ?? 1;
  const conn = await freshDatabase(adminUrl, `bootorch_bench_real_${nodes}_${replicas}${o.tag ?? ''}`);
  // The in-process bench's options (scale.ts), discovery on so that the worker finds the nodes in HSM.
  await conn.pool.query('insert into options (id, data) values (1, $1)', [
    JSON.stringify({ polling_frequency: 15, max_component_batch_size: o.batchSize ?? 2800 }),
  ]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-real-path-'));
  const tokenFile = path.join(dir, 'tokens.json');
  writeFileSync(tokenFile, '{}');
  const roles: RoleProcess[] = [];
  try {
    const [workerPort, ...ports] = await freePorts(replicas + 1);
    const sim = startRole(
      'sim',
      { SIM_NODES: String(nodes) },
      [
        '--nodes',
        String(nodes),
        '--port',
        '0',
        '--timing',
        'instant',
        '--initial',
        'booted',
        '--bootorch-url',
        ports.map((p) => `http://127.0.0.1:${p}/graphql`).join(','),
        '--report-token-file',
        tokenFile,
        ...(o.faults ?? []).flatMap((f) => ['--fault', f]),
      ],
      profileArgs('sim'),
    );
    roles.push(sim);
    const simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/, 120_000))[1]!;
    const simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const env = {
      DATABASE_URL: conn.url,
      BOOTORCH_ADAPTERS: 'http',
      BOOTORCH_AUTH_MODE: 'tokens',
      BOOTORCH_RATE_LIMIT_BURST: '0',
      ...simEnv,
    };
    const apiUrls: string[] = [];
    for (const port of ports) {
      const api = startRole('api', { ...env, PORT: String(port) }, [], profileArgs('api'));
      roles.push(api);
      apiUrls.push((await api.waitFor(/bootorch api: (\S+)/, 120_000))[1]!);
    }
    // The first worker serves its metrics on workerPort (the status passes are read from it).
    for (let i = 0; i < (o.workers ?? 1); i++)
      roles.push(
        startRole(
          'worker',
          { ...env, ...o.workerEnv, ...(i === 0 ? { WORKER_HEALTH_PORT: String(workerPort) } : {}) },
          [],
          profileArgs('worker'),
        ),
      );
    const ids = await until(
      async () => {
        const r = await conn.pool.query<{ id: string }>('select id from components order by id');
        return r.rows.length >= nodes && r.rows.map((x) => x.id);
      },
      `${nodes} components discovered`,
      300_000,
    );
    // One node token per node, in bulk (createNodeToken is a transaction each), handed to the simulator's nodes.
    const tokens = ids.map((_, i) => `bto_${i.toString(16).padStart(16, '0')}_${'N'.repeat(43 - String(i).length)}${i}`);
    await conn.pool.query(
      `insert into api_tokens (id, hash, role, subject) select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
      [tokens.map((t) => t.slice(4, 20)), tokens.map(hashApiToken), ids.map(() => 'node'), ids],
    );
    writeFileSync(tokenFile, JSON.stringify(Object.fromEntries(ids.map((id, i) => [id, tokens[i]]))));
    const admin = (await createApiToken(conn.db, { role: 'admin', subject: 'bench' })).token;
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await fetch(apiUrls[0]!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data?: unknown; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors).slice(0, 500));
      return body.data;
    };
    await gql(
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "t", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: simEnv.SIM_IMAGE, type: 's3', arch: 'X86', nodeRolesGroups: ['Compute'] }] },
    );
    const load = os.loadavg()[0]!;
    const statusCounts = async () => {
      const m = await (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text();
      return { passes: byPass(m, 'bootorch_status_passes_total'), rows: byPass(m, 'bootorch_status_rows_read_total') };
    };
    const status0 = await statusCounts();
    const cpu0 = roles.map((p) => cpuSeconds(p.proc.pid));
    const machine0 = machineCpuSeconds();
    const t0 = performance.now();
    const createdAt = Date.now();
    const started = new Date(createdAt - 1000);
    await gql(`mutation { createSession(input: { operation: REBOOT, templateName: "t", name: "bench" }) { session { name } } }`);
    await until(
      async () => (await conn.pool.query(`select status from sessions where name = 'bench'`)).rows[0]?.status === 'complete',
      'session complete',
      15 * 60_000,
    );
    const wallMs = performance.now() - t0;
    const cpu1 = roles.map((p) => cpuSeconds(p.proc.pid));
    const machine = machineCpuSeconds() - machine0;
    const used = (i: number) => cpu1[i]! - cpu0[i]!;
    const status1 = await statusCounts();
    const delta = (a: PassCounts, b: PassCounts): PassCounts => ({
      full: b.full - a.full,
      transit: b.transit - a.transit,
      changed: b.changed - a.changed,
    });
    const t = (
      await conn.pool.query(
        `select extract(epoch from max(at) filter (where kind = 'action')) * 1000 as action,
                extract(epoch from min(at) filter (where kind = 'report')) * 1000 as first,
                extract(epoch from max(at) filter (where kind = 'report')) * 1000 as last
           from component_events where at >= $1`,
        [started],
      )
    ).rows[0];
    const r = (
      await conn.pool.query(
        `select count(*)::int as n, count(distinct component_id)::int as nodes, extract(epoch from max(at) - min(at)) * 1000 as span
      from component_events where kind = 'report' and at >= $1`,
        [started],
      )
    ).rows[0];
    const stable = (await conn.pool.query(`select count(*)::int as n from components where status = 'stable'`)).rows[0].n as number;
    await o.inspect?.({ conn, apiUrls, adminToken: admin, simUrl });
    const counters = (await (await fetch(`${simUrl}/sim/counters`)).json()) as { reports: { refused: number } };
    return {
      nodes,
      replicas,
      wallMs,
      reportSpanMs: Number(r.span ?? 0),
      reports: r.n,
      refused: counters.reports.refused,
      reported: r.nodes,
      stable,
      load,
      timeline: {
        lastActionMs: Number(t.action) - createdAt,
        firstReportMs: Number(t.first) - createdAt,
        lastReportMs: Number(t.last) - createdAt,
      },
      // roles: the simulator, the API replicas, then the workers.
      cpu: {
        sim: used(0),
        api: ports.reduce((a, _p, i) => a + used(i + 1), 0),
        worker: roles.slice(1 + ports.length).reduce((a, _p, i) => a + used(i + 1 + ports.length), 0),
        rest: machine - roles.reduce((a, _p, i) => a + used(i), 0),
      },
      statusPasses: delta(status0.passes, status1.passes),
      statusRowsRead: delta(status0.rows, status1.rows),
      reaped: roles
        .slice(1 + ports.length)
        .flatMap((w) => w.output().split('\n'))
        .filter((l) => l.includes('"reaped jobs of a process that is gone"'))
        .reduce((n, l) => n + (JSON.parse(l) as { jobs: number }).jobs, 0),
    };
  } finally {
    await Promise.all(roles.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
    await conn.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('set DATABASE_URL');
  for (const n of (process.env.NODES ?? '1000').split(',').map(Number)) {
    const r = await runRealPath(url, n, { replicas: Number(process.env.REPLICAS ?? 1) });
    process.stdout.write(`${JSON.stringify(r)}\n`);
  }
  process.exit(0);
}
