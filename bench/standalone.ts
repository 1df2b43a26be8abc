/**
 * `--parts=standalone`: a site without CSM at scale, beside the CSM real path of the same run.
 *
 * The reboot: `bootorch sim --standalone` (a Redfish BMC per node, each at its own loopback address;
 * src/sim/standalone.ts), `bootorch api` and `bootorch worker` with BOOTORCH_ADAPTERS=standalone, as
 * processes. The simulator's nodes are registered through registerNodes (the file it writes, as `bootorch
 * node apply -f` reads it, in chunks), discovered, and rebooted: power over Redfish through the BMC
 * guard at its defaults (one call per BMC, BOOTORCH_BMC_CONCURRENCY 64), each node then network-booting
 * by MAC from /boot/v1, trading its ticket for its credential and reporting with it. Instant hardware,
 * as the real path's. Measured: createSession to session complete; each process's CPU seconds from
 * createSession to complete and its peak RSS (VmHWM), per node.
 * The PXE storm beside it: bench/pxe-storm.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startRole, type RoleProcess } from '../test/helpers/processes.ts';
import { freePort } from '../test/helpers/global-setup.ts';
import { createApiToken } from '../src/auth/api-tokens.ts';
import { nodeInput } from '../src/cli/nodes.ts';
import { BMC_PASSWORD_ENV } from '../src/sim/standalone.ts';
import { freshDatabase } from './scale.ts';
import { cpuSeconds } from './api-load.ts';
import { loadText, methodLink, rewriteSection } from './fanout-report.ts';
import { profileArgs, type RealPathResult } from './real-path.ts';

export const STANDALONE_TITLE = '## 8. Standalone at site scale: a reboot over Redfish';

type Roles = { sim: number; api: number; worker: number };

export interface StandaloneResult {
  nodes: number;
  wallMs: number;
  registerMs: number;
  discoveryMs: number;
  stable: number;
  /** CPU seconds from createSession to complete, per process. */
  cpu: Roles;
  /** Peak RSS (VmHWM) of each process over the whole run, MB. */
  rssMb: Roles;
  pxe: Record<string, number>;
  bmc: { maxInFlight: number; maxInFlightPerNode: number };
  /** The worker's BMC calls over the whole run (its metrics): how many, their mean time, their mean wait for a turn. */
  calls: BmcCalls;
  reports: { delivered: number; refused: number };
  load: number;
}

interface BmcCalls {
  count: number;
  meanMs: number;
  turnWaitMeanMs: number;
}

/** The worker's BMC call totals from its Prometheus text (bootorch_bmc_call_duration_seconds, bootorch_bmc_turn_wait_seconds). */
function bmcCalls(metrics: string): BmcCalls {
  const total = (name: string) =>
    metrics
      .split('\n')
      .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  const count = total('bootorch_bmc_call_duration_seconds_count');
  const waits = total('bootorch_bmc_turn_wait_seconds_count');
  return {
    count,
    meanMs: count ? (total('bootorch_bmc_call_duration_seconds_sum') / count) * 1000 : Number.NaN,
    turnWaitMeanMs: waits ? (total('bootorch_bmc_turn_wait_seconds_sum') / waits) * 1000 : Number.NaN,
  };
}

export function peakRssMb(pid: number | undefined): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function until<T>(f: () => Promise<T | undefined | false>, what: string, timeoutMs: number, detail = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`standalone: ${what} not reached within ${timeoutMs} ms\n${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function bootFiles(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-bench-standalone-'));
  writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      artifacts: [
        { type: 'application/vnd.cray.image.kernel', link: { path: 'vmlinuz' } },
        { type: 'application/vnd.cray.image.initrd', link: { path: 'initrd.gz' } },
      ],
    }),
  );
  return dir;
}

const tail = (r: RoleProcess | undefined) => r?.output().slice(-3000) ?? '';

export async function runStandaloneReboot(adminUrl: string, nodes: number, log: (m: string) => void): Promise<StandaloneResult> {
  const conn = await freshDatabase(adminUrl, `bootorch_bench_standalone_${nodes}`);
  await conn.pool.query('insert into options (id, data) values (1, $1)', [
    JSON.stringify({ polling_frequency: 15, max_component_batch_size: 2800, discovery_frequency: 2 }),
  ]);
  const dir = bootFiles();
  const nodesFile = path.join(dir, 'nodes.json');
  const roles: Partial<Record<keyof Roles, RoleProcess>> = {};
  const detail = () => `sim:\n${tail(roles.sim)}\napi:\n${tail(roles.api)}\nworker:\n${tail(roles.worker)}`;
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    roles.sim = startRole(
      'sim',
      {},
      [
        '--standalone',
        '--boot-url',
        base,
        '--nodes',
        String(nodes),
        '--port',
        '0',
        '--timing',
        'instant',
        '--initial',
        'booted',
        '--nodes-file',
        nodesFile,
      ],
      profileArgs('sim'),
    );
    const simUrl = (await roles.sim.waitFor(/simulator: GET (\S+)\/sim\/info/, 300_000))[1]!;
    const env = {
      BOOTORCH_ADAPTERS: 'standalone',
      DATABASE_URL: conn.url,
      BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
      BOOTORCH_BOOT_FILES: dir,
      BOOTORCH_BOOT_URL: base,
      BOOTORCH_AUTH_MODE: 'tokens',
      // The GraphQL door's limit, as the real path sets it: the simulator's reporters share one address.
      BOOTORCH_RATE_LIMIT_BURST: '0',
      PORT: String(port),
    };
    roles.api = startRole('api', env, [], profileArgs('api'));
    await roles.api.waitFor(/bootorch api: /, 300_000);
    const workerMetrics = await freePort();
    roles.worker = startRole('worker', { ...env, WORKER_HEALTH_PORT: String(workerMetrics) }, [], profileArgs('worker'));
    const admin = (await createApiToken(conn.db, { role: 'admin', subject: 'bench' })).token;
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data?: unknown; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors).slice(0, 500));
      return body.data;
    };
    // Registration as `bootorch node apply -f` sends it, 1,000 nodes a request.
    process.env[BMC_PASSWORD_ENV] = 'calvin';
    const file = JSON.parse(readFileSync(nodesFile, 'utf8')) as { nodes: Record<string, unknown>[] };
    const r0 = performance.now();
    for (let i = 0; i < file.nodes.length; i += 1000)
      await gql('mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname } }', {
        n: file.nodes.slice(i, i + 1000).map((d, j) => nodeInput(d, `nodes[${i + j}]`)),
      });
    const registerMs = performance.now() - r0;
    await until(
      async () => (await conn.pool.query('select count(*)::int as n from components')).rows[0].n >= nodes,
      `${nodes} components discovered`,
      600_000,
      detail,
    );
    const discoveryMs = performance.now() - r0 - registerMs;
    log(`  registered ${nodes} nodes in ${Math.round(registerMs)} ms, discovered in ${Math.round(discoveryMs)} ms more`);
    await gql('mutation($i: SessionTemplateInput!) { putSessionTemplate(name: "t", input: $i) { template { name } } }', {
      i: { enableCfs: false, bootSets: [{ name: 'compute', type: 's3', path: 'manifest.json', nodeRolesGroups: ['Compute'] }] },
    });
    const load = os.loadavg()[0]!;
    const pid = (k: keyof Roles) => roles[k]!.proc.pid;
    const cpu0 = { sim: cpuSeconds(pid('sim')), api: cpuSeconds(pid('api')), worker: cpuSeconds(pid('worker')) };
    const t0 = performance.now();
    await gql('mutation { createSession(input: { operation: REBOOT, templateName: "t", name: "bench" }) { session { name } } }');
    await until(
      async () => (await conn.pool.query(`select status from sessions where name = 'bench'`)).rows[0]?.status === 'complete',
      'session complete',
      // 30 min, and 36 ms a node past 50,000 (an hour at 100,000: 8 BMC calls a node at about 500 a second here).
      Math.max(30 * 60_000, nodes * 36),
      detail,
    );
    const wallMs = performance.now() - t0;
    const cpu = {
      sim: cpuSeconds(pid('sim')) - cpu0.sim,
      api: cpuSeconds(pid('api')) - cpu0.api,
      worker: cpuSeconds(pid('worker')) - cpu0.worker,
    };
    const rssMb = { sim: peakRssMb(pid('sim')), api: peakRssMb(pid('api')), worker: peakRssMb(pid('worker')) };
    const stable = (
      await conn.pool.query(
        `select count(*)::int as n from components where status = 'stable' and desired_bss_token <> '' and actual_bss_token = desired_bss_token`,
      )
    ).rows[0].n as number;
    const c = (await (await fetch(`${simUrl}/sim/counters`)).json()) as {
      pxe: Record<string, number>;
      bmc: { maxInFlight: number; maxInFlightPerNode: number };
      reports: { delivered: number; refused: number };
    };
    const calls = bmcCalls(await (await fetch(`http://127.0.0.1:${workerMetrics}/metrics`)).text());
    return { nodes, wallMs, registerMs, discoveryMs, stable, cpu, rssMb, pxe: c.pxe, bmc: c.bmc, calls, reports: c.reports, load };
  } finally {
    await Promise.all(Object.values(roles).map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
    await conn.close();
  }
}

export const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function standaloneSection(x: {
  reboots: StandaloneResult[];
  csm: RealPathResult[];
  loadAtStart: number[];
  command: string;
}): string {
  const csmOf = (n: number) => x.csm.find((r) => r.nodes === n);
  const perNode = (v: number, n: number, unit: string, d: number) =>
    `${fmt(v, 1)} ${unit} (${fmt((v * (unit === 'MB' ? 1024 : 1000)) / n, d)} ${unit === 'MB' ? 'KB' : 'ms'}/node)`;
  return [
    STANDALONE_TITLE,
    '',
    `\`${x.command}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(x.loadAtStart)} (the load during each part is in its row); ${methodLink('standalone-reboot')}.`,
    '',
    '| nodes | standalone reboot | CSM real path | standalone / CSM (goal ≤ 1.5) | nodes stable | boot scripts, exchanges, PXE retries, failed | CPU s from createSession: sim / api / worker (per node) | peak RSS: sim / api / worker (per node) | load (1 min) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...x.reboots.map((r) => {
      const csm = csmOf(r.nodes);
      return `| ${fmt(r.nodes)} | ${fmt(r.wallMs)} ms | ${csm ? `${fmt(csm.wallMs)} ms` : '–'} | ${csm ? `**${fmt(r.wallMs / csm.wallMs, 2)}**` : '–'} | ${fmt(r.stable)} | ${fmt(r.pxe.scripts ?? 0)}, ${fmt(r.pxe.exchanges ?? 0)}, ${fmt(r.pxe.retried ?? 0)}, ${fmt(r.pxe.failed ?? 0)} | ${perNode(r.cpu.sim, r.nodes, 's', 2)} / ${perNode(r.cpu.api, r.nodes, 's', 2)} / ${perNode(r.cpu.worker, r.nodes, 's', 2)} | ${perNode(r.rssMb.sim, r.nodes, 'MB', 1)} / ${perNode(r.rssMb.api, r.nodes, 'MB', 1)} / ${perNode(r.rssMb.worker, r.nodes, 'MB', 1)} | ${r.load.toFixed(1)} |`;
    }),
    '',
    'Registration through the API and discovery, before the reboot: ' +
      x.reboots.map((r) => `${fmt(r.nodes)} nodes ${fmt(r.registerMs / 1000, 1)} s + ${fmt(r.discoveryMs / 1000, 1)} s`).join('; ') +
      '.',
    '',
  ].join('\n');
}

export function rewriteStandaloneSection(md: string): void {
  rewriteSection('BENCHMARKS.md', STANDALONE_TITLE, md);
}
