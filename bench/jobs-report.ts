/**
 * Issue 14's figures (`--parts=jobs`): the engine with per-component action jobs against the code
 * before them (`--before=DIR`, a checkout of it), the same in-process reboot in the same run; and the
 * real path with a slowed service, drained by 1, 2 and 4 `bootorch worker` processes. Rewrites only
 * its own section of BENCHMARKS.md.
 */
import os from 'node:os';
import path from 'node:path';
import { runScale, type ScaleResult } from './scale.ts';
import { runRealPath, type RealPathResult } from './real-path.ts';
import { rewriteSection } from './fanout-report.ts';

export const JOBS_TITLE = '## 6. Per-component action jobs (issue 14)';

/** The service slowed for the worker scale-out; batches of a twentieth of the nodes, so there are batches to share. */
const SLOWED = ['bss:slowMs=1000'];
const batchFor = (nodes: number) => Math.max(1, Math.round(nodes / 20));

interface Pair {
  nodes: number;
  before?: ScaleResult;
  after: ScaleResult;
}

export async function runJobsBench(
  adminUrl: string,
  o: { sizes: number[]; before?: string; workersAt: number; workers: number[]; log: (m: string) => void },
): Promise<void> {
  const load = os.loadavg();
  const beforeScale: typeof runScale | undefined = o.before ? (await import(path.resolve(o.before, 'bench/scale.ts'))).runScale : undefined;
  const pairs: Pair[] = [];
  for (const n of o.sizes) {
    o.log(`jobs: reboot of ${n} nodes, before and after...`);
    const before = beforeScale ? await beforeScale(adminUrl, n) : undefined;
    const after = await runScale(adminUrl, n);
    pairs.push({ nodes: n, before, after });
    o.log(
      `  before ${before ? Math.round(before.wallMs) : '-'} ms (${before?.jobsRun ?? '-'} jobs), after ${Math.round(after.wallMs)} ms (${after.jobsRun} jobs)`,
    );
  }
  const scale: Array<{ workers: number; r: RealPathResult }> = [];
  for (const w of o.workers) {
    o.log(`jobs: real path, ${o.workersAt} nodes, ${SLOWED.join(' ')}, ${w} worker process(es)...`);
    const r = await runRealPath(adminUrl, o.workersAt, { workers: w, faults: SLOWED, batchSize: batchFor(o.workersAt), tag: `_w${w}` });
    scale.push({ workers: w, r });
    o.log(`  ${Math.round(r.wallMs)} ms, ${r.stable} stable`);
  }
  rewriteSection('BENCHMARKS.md', JOBS_TITLE, section(pairs, scale, load, o.before));
}

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function section(pairs: Pair[], scale: Array<{ workers: number; r: RealPathResult }>, load: number[], before?: string): string {
  const one = scale.find((s) => s.workers === 1)?.r.wallMs;
  return [
    JOBS_TITLE,
    '',
    `Run with \`npm run bench -- --parts=jobs${before ? ' --before=DIR' : ''}\` on ${new Date().toISOString().slice(0, 10)}; load average at its start ${load.map((l) => l.toFixed(2)).join(', ')}.`,
    'Operators decide, per-component jobs act: each power and configuration decision is one pg-boss job per component, inserted in bulk with the decision, fetched in batches, completed in bulk.',
    '',
    '### In-process reboot, before (operators acting in their ticks) and after, in the same run',
    '',
    '| nodes | before | after | after / before | jobs before | jobs after | failed |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...pairs.map(
      (p) =>
        `| ${fmt(p.nodes)} | ${p.before ? `${fmt(p.before.wallMs)} ms` : '–'} | ${fmt(p.after.wallMs)} ms | ${p.before ? fmt(p.after.wallMs / p.before.wallMs, 2) : '–'} | ${p.before ? fmt(p.before.jobsRun) : '–'} | ${fmt(p.after.jobsRun)} | ${p.after.failed} |`,
    ),
    '',
    'Jobs: every pg-boss job of the reboot (operator ticks, timers and, after, the action jobs: one per component and action).',
    '',
    `### Scale-out: ${scale[0] ? fmt(scale[0].r.nodes) : ''}-node reboot on the real path, BSS slowed by 1 s per call, batches of ${scale[0] ? fmt(batchFor(scale[0].r.nodes)) : ''}`,
    '',
    '`bootorch sim --fault bss:slowMs=1000` (every boot parameters call answers after 1 s), `bootorch api`, and 1, 2 or 4 `bootorch worker` processes on one database.',
    '',
    '| worker processes | wall | speed-up over 1 | nodes stable | load (1 min) |',
    '|---:|---:|---:|---:|---:|',
    ...scale.map(
      (s) =>
        `| ${s.workers} | ${fmt(s.r.wallMs)} ms | ${one ? fmt(one / s.r.wallMs, 2) : '–'} | ${fmt(s.r.stable)} | ${s.r.load.toFixed(1)} |`,
    ),
    '',
  ].join('\n');
}
