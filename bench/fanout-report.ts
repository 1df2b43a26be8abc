/**
 * The fan-out cases `npm run bench` runs (issue 16's figures) and the BENCHMARKS.md section they
 * make. `--parts=fanout` runs only these and rewrites only this section of BENCHMARKS.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import { runFanout, type FanoutCase, type FanoutResult } from './fanout.ts';

export const FANOUT_TITLE = '## 5. Subscription fan-out';

/** A link to the part's notes in docs/benchmarks/method.md: how it is measured and what its columns mean stay there, not in BENCHMARKS.md. */
export const methodLink = (anchor: string) => `[method](docs/benchmarks/method.md#${anchor})`;

/** The load average as a section's first line gives it. */
export const loadText = (load: number[]) => load.map((l) => l.toFixed(2)).join(', ');

/** `before`: a checkout of the code before multiplexing, to measure the old way in the same run. */
export function fanoutCases(before?: string): FanoutCase[] {
  const cases: FanoutCase[] = [
    { label: '200 × componentEvents, one session', subscribers: 200, nodes: 1000, batched: false, filter: 'session' },
    { label: '1,000 × componentEventBatches, one session', subscribers: 1000, nodes: 1000, batched: true, filter: 'session' },
    {
      label: '1,000 × componentEventBatches, permessage-deflate',
      subscribers: 1000,
      nodes: 1000,
      batched: true,
      filter: 'session',
      deflate: true,
    },
    { label: '100 × componentEventBatches, one session', subscribers: 100, nodes: 10_000, batched: true, filter: 'session' },
    { label: '200 × componentEventBatches, one node each', subscribers: 200, nodes: 1000, batched: true, filter: 'one-node-each' },
  ];
  if (!before) return cases;
  return [
    {
      label: '200 × componentEvents, one session (before)',
      subscribers: 200,
      nodes: 1000,
      batched: false,
      filter: 'session',
      apiDir: before,
    },
    {
      label: '1,000 × componentEvents, one session (before)',
      subscribers: 1000,
      nodes: 1000,
      batched: false,
      filter: 'session',
      apiDir: before,
    },
    ...cases,
  ];
}

export async function runFanoutCases(adminUrl: string, cases: FanoutCase[], log: (m: string) => void): Promise<FanoutResult[]> {
  const out: FanoutResult[] = [];
  for (const c of cases) {
    log(`fan-out: ${c.label}, ${c.nodes} nodes (load ${os.loadavg()[0]!.toFixed(1)})...`);
    const r = await runFanout(adminUrl, c);
    out.push(r);
    log(
      `  p50 ${r.p50} ms p99 ${r.p99} ms, all delivered ${Number.isNaN(r.drainMs) ? 'NOT within 10 s' : `${r.drainMs} ms after completion`}, ` +
        `${r.missing} missing, ${Math.round(r.messagesPerSubscriber)} msgs and ${Math.round(r.bytesPerSubscriber / 1024)} KiB per subscriber, API RSS ${Math.round(r.apiPeakRssMb)} MB, ${r.executions} executions, ${r.fellBehind} fell behind, API write lag p50 <= ${r.writeLagP50} ms p99 <= ${r.writeLagP99} ms`,
    );
  }
  return out;
}

const fmt = (n: number, d = 0) =>
  Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function fanoutSection(rs: FanoutResult[], loadAtStart: number[]): string {
  const ok = (r: FanoutResult) => r.missing === 0 && r.drainMs <= 2000 && r.p99 < 1000 && r.apiPeakRssMb < 400;
  return [
    FANOUT_TITLE,
    '',
    `\`npm run bench -- ${process.argv.slice(2).join(' ')}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(loadAtStart)}; ${methodLink('subscription-fan-out')}.`,
    '',
    '| case | nodes | deliveries | lag p50 | lag p99 | drain | missing | messages / subscriber | bytes / subscriber | API peak RSS | API write lag p50 / p99 | goal |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rs.map(
      (r) =>
        `| ${r.label} | ${fmt(r.nodes)} | ${fmt(r.deliveries)} | ${fmt(r.p50)} ms | ${fmt(r.p99)} ms | ${Number.isNaN(r.drainMs) ? '–' : `${fmt(r.drainMs)} ms`} | ${fmt(r.missing)} | ${fmt(r.messagesPerSubscriber)} | ${fmt(r.bytesPerSubscriber / 1024)} KiB | ${fmt(r.apiPeakRssMb)} MB | ${Number.isNaN(r.writeLagP99) ? '–' : `≤ ${fmt(r.writeLagP50)} / ≤ ${fmt(r.writeLagP99)} ms`} | ${r.apiDir ? '(before)' : ok(r) ? 'met' : '**not met**'} |`,
    ),
    '',
  ].join('\n');
}

/** Replace the fan-out section of an existing BENCHMARKS.md (up to the next `## `), keeping the rest. */
export function rewriteFanoutSection(file: string, section: string): void {
  rewriteSection(file, FANOUT_TITLE, section);
}

/** The section titled `title` as the file has it now (up to the next `## `), or undefined. */
export function currentSection(file: string, title: string): string | undefined {
  const md = fs.readFileSync(file, 'utf8');
  const start = md.indexOf(title);
  if (start < 0) return undefined;
  const next = md.indexOf('\n## ', start + title.length);
  return `${md.slice(start, next < 0 ? undefined : next).trimEnd()}\n`;
}

/** Replace the section titled `title` (up to the next `## `) with `section`; append it when there is none. */
export function rewriteSection(file: string, title: string, section: string): void {
  const md = fs.readFileSync(file, 'utf8');
  const start = md.indexOf(title);
  if (start < 0) {
    fs.writeFileSync(file, `${md.trimEnd()}\n\n${section}`);
    return;
  }
  const next = md.indexOf('\n## ', start + title.length);
  fs.writeFileSync(file, `${md.slice(0, start)}${section}${next < 0 ? '' : md.slice(next)}`);
}
