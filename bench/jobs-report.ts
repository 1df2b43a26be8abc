/**
 * Issue 14's figures (`--parts=jobs`): the engine with per-component action jobs against the code
 * before them (`--before=DIR`, a checkout of it), the same in-process reboot in the same run; and the
 * real path with a slowed service, drained by 1, 2 and 4 `bootorch worker` processes. Rewrites only
 * its own section of BENCHMARKS.md.
 */
import os from 'node:os';
import path from 'node:path';
import { freshDatabase, runScale, type ScaleResult } from './scale.ts';
import { runFloor } from './floor.ts';
import { runRealPath, type RealPathResult } from './real-path.ts';
import { loadText, methodLink, rewriteSection } from './fanout-report.ts';
import { machineCpuSeconds } from './api-load.ts';

export const JOBS_TITLE = '## 6. Per-component action jobs';

/** The service slowed for the worker scale-out; batches of a twentieth of the nodes, so there are batches to share. */
const SLOWED = ['bss:slowMs=1000'];
const batchFor = (nodes: number) => Math.max(1, Math.round(nodes / 20));

/** One reboot, with the machine's CPU from createSession to completion (every process: engine, simulator, PostgreSQL). */
type Run = ScaleResult & { cpuS: number };

interface Pair {
  nodes: number;
  floorMs: number;
  before: Run[];
  after: Run[];
  load: [number, number];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runJobsBench(
  adminUrl: string,
  o: { sizes: number[]; before?: string; reps: number; workersAt: number; workers: number[]; log: (m: string) => void },
): Promise<void> {
  const load = os.loadavg();
  const beforeScale: typeof runScale | undefined = o.before ? (await import(path.resolve(o.before, 'bench/scale.ts'))).runScale : undefined;
  // Wall time on this shared machine moves with the host (steal time): the CPU a reboot used is the steadier figure.
  const measured = async (scale: typeof runScale, n: number): Promise<Run> => {
    let cpu0 = 0;
    let cpuS = 0;
    const hooks = {
      ready: async () => {
        cpu0 = machineCpuSeconds();
      },
      finished: async () => {
        cpuS = machineCpuSeconds() - cpu0;
      },
    };
    return { ...(await scale(adminUrl, n, { hooks })), cpuS };
  };
  const pairs: Pair[] = [];
  for (const n of o.sizes) {
    o.log(`jobs: reboot of ${n} nodes, the floor, then before and after alternated ${o.reps} times...`);
    const floorConn = await freshDatabase(adminUrl, `bootorch_floor_${n}`);
    const floorMs = (await runFloor(floorConn, n)).wallMs;
    await floorConn.close();
    const pair: Pair = { nodes: n, floorMs, before: [], after: [], load: [os.loadavg()[0]!, os.loadavg()[0]!] };
    for (let i = 0; i < o.reps; i++) {
      if (beforeScale) pair.before.push(await measured(beforeScale, n));
      pair.after.push(await measured(runScale, n));
      pair.load = [Math.min(pair.load[0], os.loadavg()[0]!), Math.max(pair.load[1], os.loadavg()[0]!)];
      o.log(
        `  floor ${Math.round(floorMs)} ms; before ${pair.before.at(-1) ? `${Math.round(pair.before.at(-1)!.wallMs)} ms (${pair.before.at(-1)!.cpuS.toFixed(1)} CPU s)` : '-'}, after ${Math.round(pair.after.at(-1)!.wallMs)} ms (${pair.after.at(-1)!.cpuS.toFixed(1)} CPU s, ${pair.after.at(-1)!.jobsRun} jobs)`,
      );
    }
    pairs.push(pair);
  }
  const scale: Array<{ workers: number; r: RealPathResult }> = [];
  for (const w of o.workers) {
    o.log(`jobs: real path, ${o.workersAt} nodes, ${SLOWED.join(' ')}, ${w} worker process(es)...`);
    const r = await runRealPath(adminUrl, o.workersAt, { workers: w, faults: SLOWED, batchSize: batchFor(o.workersAt), tag: `_w${w}` });
    scale.push({ workers: w, r });
    o.log(`  ${Math.round(r.wallMs)} ms, ${r.stable} stable, ${r.reaped} jobs reaped`);
  }
  rewriteSection('BENCHMARKS.md', JOBS_TITLE, section(pairs, scale, load, o.before));
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function section(pairs: Pair[], scale: Array<{ workers: number; r: RealPathResult }>, load: number[], before?: string): string {
  const one = scale.find((s) => s.workers === 1)?.r.wallMs;
  return [
    JOBS_TITLE,
    '',
    `\`npm run bench -- --parts=jobs${before ? ' --before=DIR' : ''}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(load)}; ${methodLink('per-component-action-jobs')}.`,
    '',
    '### In-process reboot, before and after, with the floor',
    '',
    '| nodes | floor | before (median; runs) | after (median; runs) | after / before | after / floor | machine CPU s, before / after (medians) | CPU after / before | jobs before | jobs after | failed | load (1 min) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...pairs.map((p) => {
      const b = p.before.length ? median(p.before.map((r) => r.wallMs)) : undefined;
      const a = median(p.after.map((r) => r.wallMs));
      const runs = (rs: ScaleResult[]) => rs.map((r) => fmt(r.wallMs)).join(', ');
      const cb = p.before.length ? median(p.before.map((r) => r.cpuS)) : undefined;
      const ca = median(p.after.map((r) => r.cpuS));
      return `| ${fmt(p.nodes)} | ${fmt(p.floorMs)} ms | ${b !== undefined ? `${fmt(b)} ms; ${runs(p.before)}` : '–'} | ${fmt(a)} ms; ${runs(p.after)} | ${b !== undefined ? fmt(a / b, 2) : '–'} | ${fmt(a / p.floorMs, 1)} | ${cb !== undefined ? fmt(cb, 1) : '–'} / ${fmt(ca, 1)} | ${cb !== undefined ? fmt(ca / cb, 2) : '–'} | ${p.before[0] ? fmt(p.before[0].jobsRun) : '–'} | ${fmt(p.after[0]!.jobsRun)} | ${p.after.reduce((x, r) => x + r.failed, 0)} | ${p.load.map((l) => l.toFixed(1)).join('–')} |`;
    }),
    '',
    `### Scale-out: ${scale[0] ? fmt(scale[0].r.nodes) : ''}-node reboot on the real path, BSS slowed by 1 s per call, batches of ${scale[0] ? fmt(batchFor(scale[0].r.nodes)) : ''}`,
    '',
    '| worker processes | wall | speed-up over 1 | nodes stable | jobs reaped | load (1 min) |',
    '|---:|---:|---:|---:|---:|---:|',
    ...scale.map(
      (s) =>
        `| ${s.workers} | ${fmt(s.r.wallMs)} ms | ${one ? fmt(one / s.r.wallMs, 2) : '–'} | ${fmt(s.r.stable)} | ${fmt(s.r.reaped)} | ${s.r.load.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
}
