/**
 * `--parts=ipmi`: IPMI at scale, measured through the adapter (src/adapters/standalone/ipmi.ts). The
 * same `chassis power status` calls against real OpenIPMI ipmi_sim BMCs (one process each,
 * test/vm/machines.ts with `sleep` as the machine), both ways the adapter runs ipmitool:
 * BOOTORCH_IPMI_MODE=process (one `ipmitool -I lanplus` process per call) and =shell (the default: a
 * long-lived `ipmitool ... shell` per BMC from the adapter's pool, src/adapters/standalone/ipmi-shell.ts,
 * started within the measurement by each BMC's first call and closed at its end), and shells again with
 * the pool capped at half the BMCs (what a pass over more BMCs than BOOTORCH_IPMI_SHELLS costs).
 * One call in flight per BMC, at most `--ipmi-concurrency` (64, BOOTORCH_BMC_CONCURRENCY's default) in all.
 * `--ipmi-bmcs` (100) BMCs × `--ipmi-calls` (10) calls each: 1,000 calls, as many as one status pass
 * over 1,000 nodes makes; 1,000 ipmi_sim processes do not fit beside the rest of this machine, so the
 * per-BMC figures are given for 1,000 BMCs by multiplication, said so.
 * Measured: wall time, CPU (this process and its children: the ipmitool processes, reaped), the most
 * file descriptors this process held and the most ipmitool processes alive at once (its children in /proc).
 * No npm package is compared: none is kept up (npm has no maintained IPMI v2 / RMCP+ client).
 * Rewrites only its own section of BENCHMARKS.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import { BMC_PASSWORD, BMC_USER, Machines } from '../test/vm/machines.ts';
import { ipmitoolChildren } from '../test/helpers/ipmi-sim.ts';
import { IpmiTool, type IpmiMode } from '../src/adapters/standalone/ipmi.ts';
import type { BmcTarget } from '../src/adapters/standalone/bmc.ts';
import { methodLink, rewriteSection } from './fanout-report.ts';

export const IPMI_TITLE = '## IPMI at scale: a process per call against a shell per BMC';

/** A way to run the calls: the adapter's mode, and for shells a cap on open shells (the default's, 128, when none). */
interface Way {
  mode: IpmiMode;
  maxShells?: number;
}

interface Result {
  way: Way;
  calls: number;
  failed: number;
  wallS: number;
  cpuS: number;
  peakFds: number;
  peakProcesses: number;
  /** Shells the adapter started (shell mode). */
  shellsStarted?: number;
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** CPU seconds of this process and of its children that were waited for (/proc/self/stat utime, stime, cutime, cstime). */
function cpuWithChildren(): number {
  const f = fs.readFileSync('/proc/self/stat', 'utf8');
  const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(after[11]) + Number(after[12]) + Number(after[13]) + Number(after[14])) / 100;
}

const openFds = () => fs.readdirSync('/proc/self/fd').length;

/** Calls `call(bmc)` callsPerBmc times per BMC, one at a time per BMC, at most `concurrency` in all. */
async function drive(bmcs: number, callsPerBmc: number, concurrency: number, call: (bmc: number) => Promise<void>): Promise<number> {
  let failed = 0;
  const queue = Array.from({ length: callsPerBmc }, () => Array.from({ length: bmcs }, (_, i) => i)).flat();
  const busy = new Set<number>();
  const next = 0;
  const worker = async () => {
    while (next < queue.length) {
      // The next call whose BMC is free (the per-BMC turn).
      let k = next;
      while (k < queue.length && busy.has(queue[k]!)) k++;
      if (k >= queue.length) {
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      const bmc = queue.splice(k, 1)[0]!;
      busy.add(bmc);
      try {
        await call(bmc);
      } catch {
        failed++;
      } finally {
        busy.delete(bmc);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

async function measure(way: Way, o: { bmcs: number; calls: number; concurrency: number }, run: () => Promise<number>): Promise<Result> {
  let peakFds = openFds();
  let peakProcesses = 0;
  const sampler = setInterval(() => {
    peakFds = Math.max(peakFds, openFds());
    peakProcesses = Math.max(peakProcesses, ipmitoolChildren().length);
  }, 20);
  const cpu0 = cpuWithChildren();
  const t0 = performance.now();
  const failed = await run();
  const wallS = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  return { way, calls: o.bmcs * o.calls, failed, wallS, cpuS: cpuWithChildren() - cpu0, peakFds, peakProcesses };
}

export async function runIpmiBench(o: { bmcs: number; calls: number; concurrency: number; log: (m: string) => void }): Promise<Result[]> {
  const machines = new Machines({ machine: 'sleep' });
  const results: Result[] = [];
  const load: number[] = [];
  try {
    o.log(`ipmi: starting ${o.bmcs} ipmi_sim BMCs...`);
    for (let i = 0; i < o.bmcs; i++) await machines.add(`b${i}`, `x3000c0s${i}b0n0`, i % 250);
    await machines.ready(120_000);
    const targets: BmcTarget[] = machines.nodes.map((n) => ({
      id: n.xname,
      address: n.bmcAddress,
      username: BMC_USER,
      password: BMC_PASSWORD,
    }));

    // The third way: half as many shells as BMCs, a pass in round robin (the calls' order), so every
    // call finds its shell closed by the cap: the cost of a pass over more BMCs than BOOTORCH_IPMI_SHELLS.
    const ways: Way[] = [{ mode: 'process' }, { mode: 'shell' }, { mode: 'shell', maxShells: Math.max(1, Math.floor(o.bmcs / 2)) }];
    for (const way of ways) {
      const tool = new IpmiTool({ timeoutMs: 15_000, ...way });
      o.log(`ipmi: ${fmt(o.bmcs * o.calls)} calls through the adapter, ${label(way)}...`);
      load.push(os.loadavg()[0]!);
      const r = await measure(way, o, async () => {
        const failed = await drive(o.bmcs, o.calls, o.concurrency, async (b) => void (await tool.powerState(targets[b]!)));
        await tool.close();
        return failed;
      });
      results.push({ ...r, shellsStarted: tool.shells?.started });
    }
    for (const r of results)
      o.log(
        `  ${label(r.way)}: ${fmt(r.wallS, 1)} s wall, ${fmt(r.cpuS, 1)} s CPU (${fmt((r.cpuS / r.calls) * 1000, 1)} ms a call), ${r.failed} failed, at most ${r.peakFds} fds and ${r.peakProcesses} ipmitool processes`,
      );
  } finally {
    await machines.stop();
  }
  rewriteSection('BENCHMARKS.md', IPMI_TITLE, section(results, o, load));
  return results;
}

function label(w: Way): string {
  if (w.mode === 'process') return 'process per call (`BOOTORCH_IPMI_MODE=process`)';
  return w.maxShells
    ? `shell per BMC, at most ${w.maxShells} shells (\`BOOTORCH_IPMI_SHELLS=${w.maxShells}\`)`
    : 'shell per BMC (`shell`, the default)';
}

function section(rs: Result[], o: { bmcs: number; calls: number; concurrency: number }, load: number[]): string {
  const [p, s, c] = rs as [Result, Result, Result];
  const perCall = (r: Result) => (r.cpuS / r.calls) * 1000;
  const row = (r: Result) =>
    `| ${label(r.way)} | ${fmt(r.calls)} | ${r.failed} | ${fmt(r.wallS, 1)} s | ${fmt(r.cpuS, 1)} s | ${fmt(perCall(r), 1)} ms | ${r.shellsStarted ?? '–'} | ${r.peakProcesses} | ${r.peakFds} |`;
  return `${IPMI_TITLE}

\`npm run bench -- --parts=ipmi --ipmi-bmcs=${o.bmcs} --ipmi-calls=${o.calls}\` on ${new Date().toISOString().slice(0, 10)}; load (1 min) ${load.map((l) => fmt(l, 1)).join(', ')} at the start of each way; ${fmt(o.bmcs)} BMCs × ${o.calls} calls, at most ${o.concurrency} at once; ${methodLink('ipmi')}.

| way | calls | failed | wall | CPU | CPU a call | shells started | ipmitool processes at once | file descriptors at most |
|---|---:|---:|---:|---:|---:|---:|---:|---:|
${row(p)}
${row(s)}
${row(c)}

The adapter uses a shell per BMC (${fmt(perCall(p) / perCall(s), 1)}× less CPU a call, ${fmt(p.wallS / s.wallS, 1)}× less wall time in this run); \`BOOTORCH_IPMI_MODE=process\` keeps a process per call.
`;
}
