/**
 * `--parts=standalone`, the PXE storm: the API alone (standalone, the /boot/v1 limits at their
 * defaults) with N nodes registered, each in its boot window with a disk deploy being written; every
 * node asks for its boot script from its own source address, evenly over 10 s, then trades its ticket
 * and fetches its config drive. Measured: failures (anything but 200, retries, 429s), p50/p99 of each
 * step, the storm's span, the API's CPU per node. Beside it, one source flooding /boot/v1 at the same
 * moment: how many of its requests were refused 429 (the per-source limit must hold it back while the
 * storm passes).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { startRole, type RoleProcess } from '../test/helpers/processes.ts';
import { freePort } from '../test/helpers/global-setup.ts';
import { NodeRegistry } from '../src/adapters/standalone/registry.ts';
import { StandaloneBootParams } from '../src/adapters/standalone/boot-params.ts';
import { setDeploys } from '../src/db/deploys.ts';
import { SimWorld } from '../src/sim/world.ts';
import { SimPxe, simMac } from '../src/sim/standalone.ts';
import { DEFAULT_BOOT_PER_SOURCE, DEFAULT_BOOT_TOTAL } from '../src/api/boot/limits.ts';
import { freshDatabase } from './scale.ts';
import { cpuSeconds, machineCpuSeconds, processesCpuSeconds } from './api-load.ts';
import { profileArgs } from './real-path.ts';
import { loadText, methodLink, rewriteSection } from './fanout-report.ts';
import { bootFiles, fmt, peakRssMb } from './standalone.ts';

export const STORM_TITLE = '## 8b. Standalone: a PXE storm';

export interface StormStep {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface StormResult {
  nodes: number;
  /** The storm's first script request to its last config drive, ms. */
  spanMs: number;
  /** Requests answered other than 200 (429s included), retries, and nodes that gave up. */
  refused: number;
  throttled: number;
  retried: number;
  failedNodes: number;
  steps: Record<'bootscript' | 'exchange' | 'config-drive', StormStep>;
  apiCpu: number;
  /** CPU of this process (the nodes and the flood: the load generator), and of the whole machine (PostgreSQL and neighbours included), s. */
  benchCpu: number;
  /** CPU of PostgreSQL's processes (every backend: other work's too, if any ran), s. */
  pgCpu: number;
  machineCpu: number;
  apiRssMb: number;
  /** One source asking as fast as it can throughout the storm: answered 200, refused 429 (with Retry-After). */
  flood: { ok: number; refused: number; withRetryAfter: number; other: number; seconds: number };
  load: number;
}

/**
 * One source (an address no node has) asking for boot scripts over `parallel` kept-alive connections,
 * each asking again as soon as it is answered, until `stop()`. A refused connection waits 50 ms.
 */
function flood(base: string, from: string, parallel: number) {
  const counts = { ok: 0, refused: 0, withRetryAfter: 0, other: 0, seconds: 0 };
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel, localAddress: from });
  let stopped = false;
  const t0 = performance.now();
  const one = () =>
    new Promise<void>((resolve) => {
      const req = http.request(`${base}/boot/v1/bootscript?mac=02:ff:ff:ff:ff:ff`, { agent, timeout: 30_000 }, (res) => {
        if (res.statusCode === 200) counts.ok++;
        else if (res.statusCode === 429) {
          counts.refused++;
          if (Number(res.headers['retry-after']) > 0) counts.withRetryAfter++;
        } else counts.other++;
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        counts.other++;
        setTimeout(resolve, 50);
      });
      req.end();
    });
  const loops = Array.from({ length: parallel }, async () => {
    while (!stopped) await one();
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
      counts.seconds = (performance.now() - t0) / 1000;
      return counts;
    },
  };
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

export async function runPxeStorm(
  adminUrl: string,
  nodes: number,
  o: { stormMs?: number; log: (m: string) => void },
): Promise<StormResult> {
  const stormMs = o.stormMs ?? 10_000;
  const conn = await freshDatabase(adminUrl, `bootorch_bench_storm_${nodes}`);
  const world = new SimWorld({ nodes, seed: 3 });
  const ids = world.ids();
  const dir = bootFiles();
  let api: RoleProcess | undefined;
  let pxe: SimPxe | undefined;
  try {
    // Every node registered, being deployed (its deploy agent running, so its config drive is served), in its boot window.
    const key = randomBytes(32);
    const reg = await new NodeRegistry(key).register(
      conn.db,
      ids.map((xname, i) => ({ xname, mac: simMac(i) })),
    );
    if (!reg.ok) throw new Error(`registering: ${JSON.stringify(reg.errors.slice(0, 3))}`);
    await conn.pool.query(`insert into components (id, last_action) select unnest($1::text[]), 'newly_discovered' on conflict do nothing`, [
      ids,
    ]);
    await setDeploys(
      conn.db,
      { name: 'storm', tenantKey: '' },
      ids.map((id) => ({
        id,
        deploy: {
          image: { url: 'http://127.0.0.1:1/image.raw', format: 'raw', checksum: `sha256:${'0'.repeat(64)}` },
          config_drive: { meta_data: '' },
        },
      })),
    );
    await conn.pool.query(`update component_deploys set state = 'starting'`);
    await new StandaloneBootParams(conn.db).setBootParameters({
      hosts: ids,
      kernel: 'vmlinuz',
      initrd: 'initrd.gz',
      params: 'console=ttyS0',
    });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    api = startRole(
      'api',
      {
        BOOTORCH_ADAPTERS: 'standalone',
        DATABASE_URL: conn.url,
        BOOTORCH_SECRET_KEY: key.toString('base64'),
        BOOTORCH_BOOT_FILES: dir,
        BOOTORCH_BOOT_URL: base,
        BOOTORCH_AUTH_MODE: 'tokens',
        PORT: String(port),
      },
      [],
      profileArgs('api'),
    );
    await api.waitFor(/bootorch api: /, 300_000);
    const times: Record<string, number[]> = { bootscript: [], exchange: [], 'config-drive': [] };
    let refused = 0;
    pxe = new SimPxe(world, {
      bootUrl: base,
      connections: 100_000,
      timeoutMs: 60_000,
      onAnswer(step, ms, status) {
        if (status === 200) times[step]?.push(ms);
        else refused++;
      },
    });
    const load = os.loadavg()[0]!;
    const cpu0 = cpuSeconds(api.proc.pid);
    const bench0 = process.cpuUsage();
    const machine0 = machineCpuSeconds();
    const pg0 = processesCpuSeconds('postgres');
    let failedNodes = 0;
    const t0 = performance.now();
    // The flood starts with the storm and stops when the storm's last node is answered.
    const flooding = flood(base, '127.0.0.2', 8);
    await Promise.all(
      ids.map(async (id, k) => {
        const at = (k * stormMs) / nodes;
        await new Promise((r) => setTimeout(r, Math.max(0, at - (performance.now() - t0))));
        try {
          const entry = await pxe!.netboot(world.node(id)!);
          const cred = pxe!.credentials.get(id);
          if (entry === 'disk' || !cred) throw new Error(`${id}: no ticket in its boot script`);
          await pxe!.configDrive(id, cred);
        } catch (e) {
          if (failedNodes++ < 3) o.log(`  storm: ${(e as Error).message}`);
        }
      }),
    );
    const spanMs = performance.now() - t0;
    const benchCpu = (() => {
      const u = process.cpuUsage(bench0);
      return (u.user + u.system) / 1e6;
    })();
    const machineCpu = machineCpuSeconds() - machine0;
    const pgCpu = processesCpuSeconds('postgres') - pg0;
    const flooded = await flooding.stop();
    const step = (xs: number[]): StormStep => ({ count: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(0, ...xs) });
    return {
      nodes,
      spanMs,
      refused,
      throttled: world.counters.pxe.throttled,
      retried: world.counters.pxe.retried,
      failedNodes,
      steps: { bootscript: step(times.bootscript!), exchange: step(times.exchange!), 'config-drive': step(times['config-drive']!) },
      apiCpu: cpuSeconds(api.proc.pid) - cpu0,
      benchCpu,
      pgCpu,
      machineCpu,
      apiRssMb: peakRssMb(api.proc.pid),
      flood: flooded,
      load,
    };
  } finally {
    pxe?.close();
    world.close();
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
    await conn.close();
  }
}

const per = (b: { perSecond: number; burst: number }) => `${fmt(b.perSecond)}/s burst ${fmt(b.burst)}`;

export function stormSection(storms: StormResult[], o: { command: string; loadAtStart: number[] }): string {
  const cores = os.cpus().length;
  return [
    STORM_TITLE,
    '',
    `\`${o.command}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(o.loadAtStart)}; /boot/v1 limits at their defaults (${per(DEFAULT_BOOT_PER_SOURCE)} per source, ${per(DEFAULT_BOOT_TOTAL)} overall); ${methodLink('pxe-storm')}.`,
    '',
    `| nodes in 10 s | span | refused / retried / nodes failed | boot script p50 / p99 | exchange p50 / p99 | config drive p50 / p99 | CPU s: API / nodes (bench) / PostgreSQL / machine (of span × ${cores} cores) | API peak RSS | the flood: answered / refused 429 in s | load (1 min) |`,
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...storms.map((s) => {
      const st = (k: keyof StormResult['steps']) => `${fmt(s.steps[k].p50)} / ${fmt(s.steps[k].p99)} ms`;
      const f = s.flood;
      const busy = (100 * s.machineCpu) / ((s.spanMs / 1000) * cores);
      return `| ${fmt(s.nodes)} | ${fmt(s.spanMs)} ms | ${s.refused} / ${s.retried} / ${s.failedNodes} | ${st('bootscript')} | ${st('exchange')} | ${st('config-drive')} | ${fmt(s.apiCpu, 1)} (${fmt((s.apiCpu * 1000) / s.nodes, 2)} ms/node) / ${fmt(s.benchCpu, 1)} / ${fmt(s.pgCpu, 1)} / ${fmt(s.machineCpu, 1)} (${fmt(busy)} %) | ${fmt(s.apiRssMb)} MB | ${fmt(f.ok)} / ${fmt(f.refused)} in ${fmt(f.seconds, 1)} s | ${s.load.toFixed(1)} |`;
    }),
    '',
  ].join('\n');
}

export function rewriteStormSection(md: string): void {
  rewriteSection('BENCHMARKS.md', STORM_TITLE, md);
}
