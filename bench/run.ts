/**
 * `npm run bench`: bootorch's orchestration cost, measured against the floor (the least database
 * work the same reboot needs) and against BOS-style polling, all in one run on this machine. Writes
 * BENCHMARKS.md's sections 1–5 (the page's introduction and later sections stay).
 * Flags: --full adds the 100,000-node reboot; --skip-polling skips the (slow) polling baseline;
 * --sizes=1,1000 picks the sizes; --parts=reboot,polling,real,reports,api,fanout picks the parts
 * (a run of fanout alone rewrites only its section of BENCHMARKS.md); --before=DIR measures the code
 * checked out in DIR in the same run: its engine with its kicks off as the polling baseline (a
 * checkout whose bench/scale.ts still takes `kicks`, up to 3857e1c; without DIR there is no polling
 * baseline), its API as the reporter load's baseline, and its API's fan-out (the code before multiplexing).
 * --parts=jobs runs the action jobs' figures alone (bench/jobs-report.ts: the reboot against DIR's engine, and
 * 1/2/4 worker processes; --reps=3 --workers=1,2,4 --workers-at=10000) and rewrites only its section.
 * --parts=ipmi runs the IPMI comparison alone (bench/ipmi.ts: ipmitool per call against a shell per BMC on
 * ipmi_sim; --ipmi-bmcs=100 --ipmi-calls=10 --ipmi-concurrency=64) and rewrites only its section.
 * --parts=consoles runs the console capture's cost per node alone (bench/consoles.ts: real ipmi_sim BMCs,
 * --console-nodes=20 --console-boot-bytes=65536; the 10,000-node figures multiplied) and rewrites only its section.
 * --parts=tokens runs `bootorch token nodes` alone (bench/tokens.ts: --token-sizes=10000,100000, with --before=DIR
 * the code in DIR in the same run) and rewrites only its section.
 * --parts=bmc runs the BMC protection figures alone (bench/bmc.ts: a reboot over Redfish undisturbed and
 * with 1 % of the BMCs dead, refusing or slow; --reps=2 --bmc-nodes=1000) and rewrites only its section.
 * --parts=standalone runs a site without CSM alone (bench/standalone.ts: the CSM real path, then the standalone
 * reboot over Redfish with PXE, at 10,000 nodes, 100,000 with --full, --standalone-sizes=N,...; bench/pxe-storm.ts:
 * a PXE storm of 10,000 nodes, --storm-sizes=N,...; bench/deploys.ts: 1,000 disk deploys at once against the
 * network's bound, --deploy-sizes=N,... --deploy-image-mib=8; an empty list (--standalone-sizes=) skips that part) and
 * rewrites the sections of the parts that ran.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { freshDatabase, runScale, type ScaleResult } from './scale.ts';
import { runFloor } from './floor.ts';
import { runApiLoad, type ApiLoadResult } from './api-load.ts';
import type { FanoutResult } from './fanout.ts';
import {
  currentSection,
  FANOUT_TITLE,
  fanoutCases,
  fanoutSection,
  loadText,
  methodLink,
  rewriteFanoutSection,
  runFanoutCases,
} from './fanout-report.ts';
import { runRealPath, type RealPathResult } from './real-path.ts';
import { runReportLoad, type ReportLoadRow } from './report-load.ts';
import { runJobsBench } from './jobs-report.ts';
import { runBmcBench } from './bmc.ts';
import { runStandaloneReboot, standaloneSection, rewriteStandaloneSection, type StandaloneResult } from './standalone.ts';
import { rewriteStormSection, runPxeStorm, stormSection, type StormResult } from './pxe-storm.ts';
import { deploysSection, rewriteDeploysSection, runDeploys, type DeploysResult } from './deploys.ts';
import { commitOf, runTokensBench } from './tokens.ts';
import { runIpmiBench } from './ipmi.ts';
import { runConsolesBench } from './consoles.ts';

const args = new Set(process.argv.slice(2));
const sizesArg = process.argv.find((a) => a.startsWith('--sizes='));
const sizes = sizesArg ? sizesArg.slice(8).split(',').map(Number) : [1, 1000, 10_000, ...(args.has('--full') ? [100_000] : [])];
const partsArg = process.argv.find((a) => a.startsWith('--parts='));
const parts = new Set(partsArg ? partsArg.slice(8).split(',') : ['reboot', 'polling', 'real', 'reports', 'api', 'fanout']);
const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
/** --cases=1,3: only these fan-out cases (1-based, in the order fanoutCases lists them). */
const casesArg = process.argv
  .find((a) => a.startsWith('--cases='))
  ?.slice(8)
  .split(',')
  .map(Number);

/** The value of `--flag=V`, or `d` when it is not given. */
const flag = (name: string, d: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
/** `--flag=N` as a number. */
const flagNumber = (name: string, d: number) => Number(flag(name, String(d)));
/** `--flag=1,2,3` as the positive numbers listed (an empty value lists none: that part is skipped). */
const flagList = (name: string, d: string) =>
  flag(name, d)
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
const log = (m: string) => process.stdout.write(`${m}\n`);
const loadAtStart = os.loadavg();
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function main() {
  let adminUrl = process.env.DATABASE_URL;
  const embedded = adminUrl ? undefined : await startEmbeddedPostgres('.data/bench', 54350);
  adminUrl ??= embedded!.url('postgres');
  const pgVersion = await (async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    const v = (await c.query('show server_version')).rows[0].server_version as string;
    await c.end();
    return v;
  })();
  if (parts.size === 1 && parts.has('jobs')) {
    await runJobsBench(adminUrl, {
      sizes: sizes.filter((s) => s >= 1000),
      before,
      reps: flagList('reps', '3')[0]!,
      workersAt: flagList('workers-at', '10000')[0]!,
      workers: flagList('workers', '1,2,4'),
      log,
    });
    await embedded?.stop();
    log('\nrewrote the action jobs section of BENCHMARKS.md');
    process.exit(0);
  }
  if (parts.size === 1 && parts.has('ipmi')) {
    await runIpmiBench({
      bmcs: flagNumber('ipmi-bmcs', 100),
      calls: flagNumber('ipmi-calls', 10),
      concurrency: flagNumber('ipmi-concurrency', 64),
      log,
    });
    await embedded?.stop();
    log('\nrewrote the IPMI section of BENCHMARKS.md');
    process.exit(0);
  }
  if (parts.size === 1 && parts.has('consoles')) {
    await runConsolesBench(adminUrl, { nodes: flagNumber('console-nodes', 20), bootBytes: flagNumber('console-boot-bytes', 65_536), log });
    await embedded?.stop();
    log('\nrewrote the console capture section of BENCHMARKS.md');
    process.exit(0);
  }
  if (parts.size === 1 && parts.has('tokens')) {
    await runTokensBench(adminUrl, {
      sizes: flagList('token-sizes', '10000,100000'),
      before,
      beforeReissueMax: flagList('before-reissue-max', '10000')[0]!,
      log,
    });
    await embedded?.stop();
    log('\nrewrote the node credentials section of BENCHMARKS.md');
    process.exit(0);
  }
  if (parts.size === 1 && parts.has('standalone')) {
    const reboots: StandaloneResult[] = [];
    const csm: RealPathResult[] = [];
    const storms: StormResult[] = [];
    for (const n of flagList('standalone-sizes', args.has('--full') ? '10000,100000' : '10000')) {
      log(`standalone: the CSM real path, reboot of ${fmt(n)} nodes...`);
      const c = await runRealPath(adminUrl, n);
      csm.push(c);
      log(`  ${fmt(c.wallMs)} ms (load ${c.load.toFixed(1)})`);
      log(`standalone: reboot of ${fmt(n)} nodes over Redfish with PXE, sim + api + worker processes...`);
      const r = await runStandaloneReboot(adminUrl, n, log);
      reboots.push(r);
      log(
        `  ${fmt(r.wallMs)} ms (x${fmt(r.wallMs / c.wallMs, 2)} CSM), ${fmt(r.stable)} stable, pxe ${JSON.stringify(r.pxe)}, CPU s sim/api/worker ${fmt(r.cpu.sim, 1)}/${fmt(r.cpu.api, 1)}/${fmt(r.cpu.worker, 1)}, RSS MB ${fmt(r.rssMb.sim)}/${fmt(r.rssMb.api)}/${fmt(r.rssMb.worker)}, BMC calls ${fmt(r.calls.count)} (mean ${fmt(r.calls.meanMs, 1)} ms, turn wait mean ${fmt(r.calls.turnWaitMeanMs, 1)} ms) (load ${r.load.toFixed(1)})`,
      );
    }
    for (const n of flagList('storm-sizes', '10000')) {
      log(`standalone: PXE storm of ${fmt(n)} nodes in 10 s (script, exchange, config drive)...`);
      const s = await runPxeStorm(adminUrl, n, { log });
      storms.push(s);
      log(
        `  span ${fmt(s.spanMs)} ms, refused ${s.refused}, failed nodes ${s.failedNodes}, p99 script/exchange/drive ${fmt(s.steps.bootscript.p99)}/${fmt(s.steps.exchange.p99)}/${fmt(s.steps['config-drive'].p99)} ms`,
      );
    }
    const deploys: DeploysResult[] = [];
    for (const n of flagList('deploy-sizes', '1000')) {
      const imageBytes = (flagList('deploy-image-mib', '8')[0] ?? 8) * 2 ** 20;
      log(`standalone: ${fmt(n)} disk deploys at once of a ${fmt(imageBytes / 2 ** 20)} MiB image, uplink 800 Mbit/s, links 100 Mbit/s...`);
      const d = await runDeploys(adminUrl, n, { imageBytes, totalMbps: 800, nodeMbps: 100, log });
      deploys.push(d);
      log(
        `  ${fmt(d.wallMs)} ms, bound ${fmt(d.boundMs)} ms (x${fmt(d.wallMs / d.boundMs, 2)}), ${d.active} active, ${d.failed} failed, ${d.peakDownloads} downloads at once at most (load ${d.load.toFixed(1)})`,
      );
    }
    await embedded?.stop();
    const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;
    // Each part rewrites its own section, and only when it ran.
    if (reboots.length) rewriteStandaloneSection(standaloneSection({ reboots, csm, loadAtStart, command }));
    if (storms.length) rewriteStormSection(stormSection(storms, { command, loadAtStart }));
    if (deploys.length) rewriteDeploysSection(deploysSection(deploys, { command }));
    log('\nrewrote the standalone sections of BENCHMARKS.md that ran');
    process.exit(0);
  }
  if (parts.size === 1 && parts.has('bmc')) {
    await runBmcBench(adminUrl, { nodes: flagNumber('bmc-nodes', 1000), reps: flagNumber('reps', 2), log });
    await embedded?.stop();
    log('\nrewrote the BMC protection section of BENCHMARKS.md');
    process.exit(0);
  }
  const rows: Array<{ r: ScaleResult; floorMs: number; floorRows: number }> = [];
  for (const n of parts.has('reboot') ? sizes : []) {
    log(`reboot of ${fmt(n)} nodes...`);
    const r = await runScale(adminUrl, n);
    const floorConn = await freshDatabase(adminUrl, `bootorch_floor_${n}`);
    const floor = await runFloor(floorConn, n);
    await floorConn.close();
    rows.push({ r, floorMs: floor.wallMs, floorRows: floor.rowsWritten });
    log(`  ${fmt(r.wallMs)} ms, ${fmt(r.nodesPerSecond)} nodes/s, floor ${fmt(floor.wallMs)} ms (x${fmt(r.wallMs / floor.wallMs, 1)})`);
  }
  let polling: ScaleResult | undefined;
  let pollingOf: ScaleResult | undefined;
  if (parts.has('polling') && parts.has('reboot') && !args.has('--skip-polling')) {
    const n = sizes.includes(1000) ? 1000 : sizes[0]!;
    if (!before) log('polling baseline: not run (it is the engine of a checkout given with --before=DIR)');
    else {
      log(
        `polling baseline: reboot of ${fmt(n)} nodes by the engine in ${before} (${commitOf(before)}), kicks off, polling_frequency 15 s...`,
      );
      polling = await pollingBaseline(before, adminUrl, n);
      pollingOf = rows.find((x) => x.r.nodes === n)!.r;
      log(`  ${fmt(polling.wallMs)} ms (x${fmt(polling.wallMs / pollingOf.wallMs, 1)} bootorch)`);
    }
  }
  const real: RealPathResult[] = [];
  for (const n of parts.has('real') ? sizes.filter((x) => x >= 1000) : []) {
    log(`real path: reboot of ${fmt(n)} nodes, bootorch sim + api + worker processes...`);
    const r = await runRealPath(adminUrl, n);
    real.push(r);
    const inProcess = rows.find((x) => x.r.nodes === n)?.r.wallMs;
    log(
      `  ${fmt(r.wallMs)} ms${inProcess ? ` (x${fmt(r.wallMs / inProcess, 1)} in-process)` : ''}, reports first to last ${fmt(r.reportSpanMs)} ms, status rows read ${fmt(r.statusRowsRead.full + r.statusRowsRead.transit + r.statusRowsRead.changed)}`,
    );
  }
  const twoAt = Math.max(...sizes.filter((s) => s <= 10_000));
  if (parts.has('real') && twoAt >= 1000) {
    log(`real path, two API replicas: reboot of ${fmt(twoAt)} nodes...`);
    const r = await runRealPath(adminUrl, twoAt, { replicas: 2 });
    real.push(r);
    log(`  ${fmt(r.wallMs)} ms, reports first to last ${fmt(r.reportSpanMs)} ms`);
  }
  let reportLoad: ReportLoadRow[] = [];
  if (parts.has('reports')) {
    log('reporter mutations at wire speed (autocannon, node tokens)...');
    reportLoad = await runReportLoad(adminUrl, { rounds: 2, before });
    for (const r of reportLoad)
      log(`  ${r.path} ${r.connections} connections: ${fmt(r.acceptedPerSecond)} accepted/s, p99 ${fmt(r.p99)} ms`);
  }
  let api: ApiLoadResult | undefined;
  if (parts.has('api')) {
    log('API under a 10,000-node reboot...');
    api = await runApiLoad(adminUrl, Math.max(...sizes.filter((s) => s <= 10_000)));
    log(`  components p50 ${fmt(api.components.p50, 1)} ms p99 ${fmt(api.components.p99, 1)} ms; reports ${fmt(api.reportsPerSecond)}/s`);
  }
  const fanLoad = os.loadavg();
  const fan: FanoutResult[] = parts.has('fanout')
    ? await runFanoutCases(
        adminUrl,
        fanoutCases(before).filter((_, i) => !casesArg || casesArg.includes(i + 1)),
        log,
      )
    : [];
  await embedded?.stop();

  if (parts.size === 1 && parts.has('fanout')) {
    rewriteFanoutSection('BENCHMARKS.md', fanoutSection(fan, fanLoad));
    log('\nrewrote the fan-out section of BENCHMARKS.md');
    process.exit(0);
  }
  if (!api && [...parts].every((p) => ['reboot', 'real', 'reports'].includes(p)) && (real.length || reportLoad.length)) {
    // The real path and the reporter load alone (the reboot part gives the in-process figures): their sections only.
    rewriteSections('BENCHMARKS.md', '## 3b.', '## 4. ', realPathSections(rows, real, reportLoad));
    log('\nrewrote sections 3b and 4a of BENCHMARKS.md');
    process.exit(0);
  }
  if (!api) throw new Error('a run that writes the whole of BENCHMARKS.md needs the api part');
  // A run without the fan-out part keeps the fan-out section of the last run that had it.
  const fanSection = parts.has('fanout')
    ? fanoutSection(fan, fanLoad)
    : (currentSection('BENCHMARKS.md', FANOUT_TITLE) ?? fanoutSection(fan, fanLoad));
  const md = report({ rows, polling, pollingOf, api, fan: fanSection, pgVersion, real, reportLoad });
  writeWholeRun('BENCHMARKS.md', md);
  log(`\nrewrote sections 1–${parts.has('fanout') ? 5 : 4} of BENCHMARKS.md`);
  process.exit(0);
}

function report(x: {
  rows: Array<{ r: ScaleResult; floorMs: number; floorRows: number }>;
  polling?: ScaleResult;
  pollingOf?: ScaleResult;
  api: ApiLoadResult;
  fan: string;
  pgVersion: string;
  real: RealPathResult[];
  reportLoad: ReportLoadRow[];
}): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  const goal = (ok: boolean) => (ok ? 'met' : '**not met**');
  const byN = (n: number) => x.rows.find((r) => r.r.nodes === n);
  const one = byN(1);
  const ten = byN(10_000);
  const hundred = byN(100_000);
  const lines = [
    '## 1–2. Reboot, createSession to session complete, against the floor',
    '',
    `\`npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${new Date().toISOString().slice(0, 10)}; load ${loadText(loadAtStart)}; ${os.cpus().length} × ${cpu}, Node ${process.version}, PostgreSQL ${x.pgVersion.split(' ')[0]}; ${methodLink('reboot-against-the-floor')}.`,
    '',
    '| nodes | wall | nodes/s | rows written | jobs run | peak RSS (engine + sim) | DB time share | floor | bootorch / floor | failed |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...x.rows.map(
      ({ r, floorMs, floorRows }) =>
        `| ${fmt(r.nodes)} | ${fmt(r.wallMs)} ms | ${fmt(r.nodesPerSecond)} | ${fmt(r.rowsWritten)} | ${fmt(r.jobsRun)} | ${fmt(r.peakRssMb)} MB | ${fmt(r.dbTimeShare * 100)} % | ${fmt(floorMs)} ms (${fmt(floorRows)} rows) | ${fmt(r.wallMs / floorMs, 1)} | ${r.failed} |`,
    ),
    '',
    `Goals: ${[
      one ? `1 node under 1 s ${goal(one.r.wallMs < 1000)} (${fmt(one.r.wallMs)} ms)` : '',
      ten ? `10,000 nodes under 20 s ${goal(ten.r.wallMs < 20_000)} (${fmt(ten.r.wallMs / 1000, 1)} s)` : '',
      ten ? `within 3× of the floor at 10,000 ${goal(ten.r.wallMs / ten.floorMs <= 3)} (×${fmt(ten.r.wallMs / ten.floorMs, 1)})` : '',
      hundred
        ? `100,000 nodes under 3 min, worker RSS under 500 MB ${goal(hundred.r.wallMs < 180_000 && hundred.r.peakRssMb < 500)} (${fmt(hundred.r.wallMs / 1000, 1)} s, ${fmt(hundred.r.peakRssMb)} MB)`
        : '100,000 nodes not run (add --full)',
    ]
      .filter(Boolean)
      .join('; ')}.`,
    '',
    "## 3. Against polling (BOS's model)",
    '',
    x.polling && x.pollingOf && before
      ? `\`--before=DIR\` (${commitOf(before)}), ${fmt(x.polling.nodes)} nodes: polling **${fmt(x.polling.wallMs)} ms** against this code's ${fmt(x.pollingOf.wallMs)} ms: polling / bootorch = **${fmt(x.polling.wallMs / x.pollingOf.wallMs, 1)}** (${methodLink('against-polling')}).`
      : `Not run in this run (it needs --before=DIR; --skip-polling skips it; ${methodLink('against-polling')}).`,
    '',
    ...realPathSections(x.rows, x.real, x.reportLoad),
    '## 4. The API under load',
    '',
    `During a ${fmt(x.api.nodes)}-node reboot, ${x.api.clients} concurrent clients, the same run as section 1–2; ${methodLink('the-api-under-load')}.`,
    '',
    '| query | requests | p50 | p99 |',
    '|---|---:|---:|---:|',
    `| components (page of 100, keyset) | ${fmt(x.api.components.count)} | ${fmt(x.api.components.p50, 1)} ms | ${fmt(x.api.components.p99, 1)} ms |`,
    `| sessionStatus | ${fmt(x.api.status.count)} | ${fmt(x.api.status.p50, 1)} ms | ${fmt(x.api.status.p99, 1)} ms |`,
    '',
    `Reporter mutations (${x.api.reportClients} clients): **${fmt(x.api.reportsPerSecond)} per second** over ${fmt(x.api.reportSeconds)} s. API peak RSS: ${fmt(x.api.apiPeakRssMb)} MB.`,
    '',
    `Goal, p99 under 100 ms during the run: ${goal(x.api.components.p99 < 100 && x.api.status.p99 < 100)}.`,
    '',
    x.fan,
    '',
  ];
  return `${lines.filter((l, i, a) => !(l === '' && a[i - 1] === '')).join('\n')}\n`;
}

/** Sections 3b (the real path) and 4a (reports at wire speed). */
function realPathSections(rows: Array<{ r: ScaleResult }>, real: RealPathResult[], reportLoad: ReportLoadRow[]): string[] {
  const inProcess = (n: number) => rows.find((x) => x.r.nodes === n)?.r.wallMs;
  const s = (ms: number) => fmt(ms / 1000, 1);
  return [
    '## 3b. The real path: `bootorch sim`, `api` and `worker` processes',
    '',
    `\`npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${new Date().toISOString().slice(0, 10)}, in-process figures from the same run; ${methodLink('the-real-path')}.`,
    '',
    '| nodes | API replicas | real path | in-process | real / in-process | last action, first and last report (s after createSession) | reports | nodes stable | status passes (full + transit + changed) | status rows read (full + transit + changed) | CPU s: sim / api / worker / rest (PostgreSQL) | load (1 min) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...real.map((r) => {
      const inproc = inProcess(r.nodes);
      return `| ${fmt(r.nodes)} | ${r.replicas} | ${fmt(r.wallMs)} ms | ${inproc ? `${fmt(inproc)} ms` : '–'} | ${inproc ? fmt(r.wallMs / inproc, 1) : '–'} | ${s(r.timeline.lastActionMs)}, ${s(r.timeline.firstReportMs)}, ${s(r.timeline.lastReportMs)} | ${fmt(r.reports)} | ${fmt(r.stable)} | ${r.statusPasses.full} + ${r.statusPasses.transit} + ${r.statusPasses.changed} | ${fmt(r.statusRowsRead.full)} + ${fmt(r.statusRowsRead.transit)} + ${fmt(r.statusRowsRead.changed)} | ${fmt(r.cpu.sim, 1)} / ${fmt(r.cpu.api, 1)} / ${fmt(r.cpu.worker, 1)} / ${fmt(r.cpu.rest, 1)} | ${r.load.toFixed(1)} |`;
    }),
    '',
    '## 4a. Reporter mutations at wire speed',
    '',
    `The same run as section 3b${before ? `; \`baseline\` is ${commitOf(before)}` : ''}; ${methodLink('reports-at-wire-speed')}.`,
    '',
    '| path | connections | accepted reports/s | p50 | p99 | not accepted | CPU per report: API / load generator / rest (PostgreSQL) | load (1 min) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...reportLoad.map(
      (r) =>
        `| ${r.path} | ${r.connections} | ${fmt(r.acceptedPerSecond)} | ${fmt(r.p50)} ms | ${fmt(r.p99)} ms | ${fmt(r.errors)} | ${fmt(r.apiCpuUs)} / ${fmt(r.loaderCpuUs)} / ${fmt(r.restCpuUs)} µs | ${r.load.toFixed(1)} |`,
    ),
    '',
  ];
}

/** A runScale that can switch its engine's kicks off, as bench/scale.ts did up to 3857e1c. */
type PollingScale = (
  adminUrl: string,
  nodes: number,
  o: { kicks: false; options: { polling_frequency: number } },
) => Promise<ScaleResult & { mode?: string }>;

/**
 * BOS's model, polling only: the reboot by the engine checked out in `dir`, with its edge-triggered
 * kicks off (writes start nothing; wakes and polls still run). This code has no such switch: a
 * baseline comes from another checkout, not from a production option.
 */
async function pollingBaseline(dir: string, adminUrl: string, nodes: number): Promise<ScaleResult> {
  const scale: PollingScale = (await import(path.resolve(dir, 'bench/scale.ts'))).runScale;
  const r = await scale(adminUrl, nodes, { kicks: false, options: { polling_frequency: 15 } });
  // A checkout without the switch ignores `kicks` and measures its kicked engine: not a baseline.
  if (r.mode !== 'polling') throw new Error(`${dir}: its bench/scale.ts cannot switch kicks off (a checkout up to 3857e1c can)`);
  return r;
}

/**
 * A whole run's sections (1–2 to 5, the fan-out) in place of the same sections of `file`: the page's own
 * introduction before them, and the sections after the fan-out (the jobs part's, and those kept by hand
 * with their own commands), stay as they are.
 */
function writeWholeRun(file: string, sections: string): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const start = old.indexOf('\n## 1–2.');
  const fan = old.indexOf(`\n${FANOUT_TITLE}`);
  const after = fan < 0 ? -1 : old.indexOf('\n## ', fan + 1);
  const before = start < 0 ? '# Benchmarks\n\n' : old.slice(0, start + 1);
  fs.writeFileSync(file, `${before}${sections}${after < 0 ? '' : `\n${old.slice(after + 1)}`}`);
}

/** Replace the part of `file` from the heading starting with `from` up to the one starting with `to`. */
function rewriteSections(file: string, from: string, to: string, lines: string[]): void {
  const md = fs.readFileSync(file, 'utf8');
  const start = md.indexOf(`\n${from}`);
  const end = md.indexOf(`\n${to}`, start + 1);
  if (start < 0 || end < 0) throw new Error(`${file} has no "${from}" … "${to}" sections`);
  fs.writeFileSync(file, `${md.slice(0, start + 1)}${lines.join('\n')}${md.slice(end)}`);
}

main().catch((e) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
