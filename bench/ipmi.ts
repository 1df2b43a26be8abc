/**
 * `--parts=ipmi`: IPMI at scale, decided by measurement. The same `chassis power status` calls against
 * real OpenIPMI ipmi_sim BMCs (one process each, test/vm/machines.ts with `sleep` as the machine), two
 * ways: one `ipmitool -I lanplus` process per call (the adapter, src/adapters/standalone/ipmi.ts), and
 * a long-lived `ipmitool -I lanplus ... shell` per BMC fed one command at a time. One call in flight
 * per BMC, at most `--ipmi-concurrency` (64, BOOTORCH_BMC_CONCURRENCY's default) in all.
 * `--ipmi-bmcs` (100) BMCs × `--ipmi-calls` (10) calls each: 1,000 calls, as many as one status pass
 * over 1,000 nodes makes; 1,000 ipmi_sim processes do not fit beside the rest of this machine, so the
 * per-BMC figures (processes, descriptors) are given for 1,000 BMCs by multiplication, said so.
 * Measured: wall time, CPU (this process and its children: the ipmitool processes, reaped), the most
 * file descriptors this process held and the most ipmitool processes alive at once.
 * No npm package is compared: none is kept up (npm has no maintained IPMI v2 / RMCP+ client).
 * Rewrites only its own section of BENCHMARKS.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { BMC_PASSWORD, BMC_USER, Machines } from '../test/vm/machines.ts';
import { IpmiTool } from '../src/adapters/standalone/ipmi.ts';
import type { BmcTarget } from '../src/adapters/standalone/bmc.ts';
import { rewriteSection } from './fanout-report.ts';

export const IPMI_TITLE = '## IPMI at scale: a process per call against a shell per BMC';

interface Result {
  way: 'process per call' | 'shell per BMC';
  calls: number;
  failed: number;
  wallS: number;
  cpuS: number;
  peakFds: number;
  peakProcesses: number;
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** CPU seconds of this process and of its children that were waited for (/proc/self/stat utime, stime, cutime, cstime). */
function cpuWithChildren(): number {
  const f = fs.readFileSync('/proc/self/stat', 'utf8');
  const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(after[11]) + Number(after[12]) + Number(after[13]) + Number(after[14])) / 100;
}

const openFds = () => fs.readdirSync('/proc/self/fd').length;

/** One long-lived `ipmitool shell` for one BMC: a command in, its answer up to the next prompt out. */
class IpmiShell {
  private out = '';
  private waiting?: (s: string) => void;
  /** The first prompt, printed once the shell's RMCP+ session is up: no command before it. */
  private readonly ready: Promise<string>;
  readonly proc: ChildProcess;

  constructor(t: BmcTarget) {
    this.proc = spawn('ipmitool', ['-I', 'lanplus', '-C', '3', ...IpmiTool.hostArgs(t.address), '-U', t.username, '-E', 'shell'], {
      env: { PATH: process.env.PATH, IPMI_PASSWORD: t.password },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const take = (d: Buffer) => {
      this.out += d.toString();
      if (this.out.endsWith('ipmitool> ') && this.waiting) {
        const w = this.waiting;
        this.waiting = undefined;
        const s = this.out;
        this.out = '';
        w(s);
      }
    };
    this.ready = new Promise((resolve) => {
      this.waiting = resolve;
    });
    this.proc.stdout!.on('data', take);
    this.proc.stderr!.on('data', take);
  }

  async call(command: string): Promise<string> {
    await this.ready;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no prompt after ${command}: ${this.out.slice(-200)}`)), 15_000);
      this.waiting = (s) => {
        clearTimeout(timer);
        resolve(s);
      };
      this.proc.stdin!.write(`${command}\n`);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.proc.exitCode !== null) return resolve();
      this.proc.once('exit', () => resolve());
      this.proc.stdin!.end('quit\n');
    });
  }
}

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

async function measure(
  way: Result['way'],
  o: { bmcs: number; calls: number; concurrency: number },
  run: (alive: { n: number }) => Promise<number>,
): Promise<Result> {
  const alive = { n: 0 };
  let peakFds = openFds();
  let peakProcesses = 0;
  const sampler = setInterval(() => {
    peakFds = Math.max(peakFds, openFds());
    peakProcesses = Math.max(peakProcesses, alive.n);
  }, 20);
  const cpu0 = cpuWithChildren();
  const t0 = performance.now();
  const failed = await run(alive);
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

    const tool = new IpmiTool({ timeoutMs: 15_000 });
    o.log(`ipmi: ${fmt(o.bmcs * o.calls)} calls, one ipmitool process each...`);
    load.push(os.loadavg()[0]!);
    const perCall = await measure('process per call', o, async (alive) =>
      drive(o.bmcs, o.calls, o.concurrency, async (b) => {
        alive.n++;
        try {
          await tool.powerState(targets[b]!);
        } finally {
          alive.n--;
        }
      }),
    );
    results.push(perCall);

    o.log(`ipmi: ${fmt(o.bmcs * o.calls)} calls through one ipmitool shell per BMC (started within the measurement)...`);
    load.push(os.loadavg()[0]!);
    const shells: IpmiShell[] = [];
    const viaShell = await measure('shell per BMC', o, async (alive) => {
      for (const t of targets) shells.push(new IpmiShell(t));
      alive.n = shells.length;
      const failed = await drive(o.bmcs, o.calls, o.concurrency, async (b) => {
        const out = await shells[b]!.call('chassis power status');
        if (!/Chassis Power is (on|off)/i.test(out)) throw new Error(out);
      });
      await Promise.all(shells.map((s) => s.close()));
      return failed;
    });
    results.push(viaShell);
    for (const r of results)
      o.log(
        `  ${r.way}: ${fmt(r.wallS, 1)} s wall, ${fmt(r.cpuS, 1)} s CPU (${fmt((r.cpuS / r.calls) * 1000, 1)} ms a call), ${r.failed} failed, at most ${r.peakFds} fds and ${r.peakProcesses} ipmitool processes`,
      );
  } finally {
    await machines.stop();
  }
  rewriteSection('BENCHMARKS.md', IPMI_TITLE, section(results, o, load));
  return results;
}

function section(rs: Result[], o: { bmcs: number; calls: number; concurrency: number }, load: number[]): string {
  const [p, s] = rs as [Result, Result];
  const row = (r: Result) =>
    `| ${r.way} | ${fmt(r.calls)} | ${r.failed} | ${fmt(r.wallS, 1)} s | ${fmt(r.cpuS, 1)} s | ${fmt((r.cpuS / r.calls) * 1000, 1)} ms | ${r.peakProcesses} | ${r.peakFds} |`;
  return `${IPMI_TITLE}

The last run: \`npm run bench -- --parts=ipmi --ipmi-bmcs=${o.bmcs} --ipmi-calls=${o.calls}\` (bench/ipmi.ts), load (1 min)
${load.map((l) => fmt(l, 1)).join(' and ')} at the start of each half. ${fmt(o.bmcs)} OpenIPMI ipmi_sim BMCs × ${o.calls} \`chassis power status\`
calls each (${fmt(p.calls)} calls; 1,000 is a status pass over 1,000 nodes), one call in flight per BMC and at most
${o.concurrency} in all. CPU is this process's and its ipmitool children's (user + system).

| way | calls | failed | wall | CPU | CPU a call | ipmitool processes at once | file descriptors at most |
|---|---:|---:|---:|---:|---:|---:|---:|
${row(p)}
${row(s)}

At 1,000 BMCs, by multiplication: a process per call costs about ${fmt((p.cpuS / p.calls) * 1000, 0)} s of CPU per pass
over 1,000 nodes and holds at most ${o.concurrency} processes (the global limit) whatever the number of BMCs; a
shell per BMC costs about ${fmt((s.cpuS / s.calls) * 1000, 0)} s of CPU per 1,000 calls but holds ${fmt((s.peakProcesses / o.bmcs) * 1000)} processes,
3,000 descriptors (three pipes each) and an RMCP+ session on every BMC all the time.
`;
}
