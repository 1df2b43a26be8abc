/**
 * Reports at wire speed: a separate `bootorch api` process takes the node reporter's own
 * reportBootState mutation (src/reporter/agent.ts's document) from autocannon, each request with the
 * node credential of the node it reports for, at 64 and 512 concurrent connections. The nodes are
 * stable, so every report is accepted and written. Run alone: `npx tsx bench/report-load.ts`, with
 * `--before=DIR` for another checkout's API beside this one (API_PROF=1 writes a CPU profile of the
 * API process to /tmp/apiprof).
 */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import autocannon from 'autocannon';
import { hashApiToken } from '../src/auth/api-tokens.ts';
import { REPORT_MUTATION } from '../src/reporter/agent.ts';
import type { Connection } from '../src/db/client.ts';
import { freshDatabase } from './scale.ts';
import { cpuSeconds, machineCpuSeconds, startApiProcess } from './api-load.ts';

export interface ReportLoadRow {
  /** `fast`: this tree's API; `baseline`: another checkout's API (`before`, e.g. the code before a change). */
  path: 'baseline' | 'fast';
  connections: number;
  /** Accepted reports (2xx answers whose body says BootStateReported) per second. */
  acceptedPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  load: number;
  /**
   * CPU per accepted report, µs, over the run (Linux /proc): the API process, the load generator (this
   * process), and the rest of the machine (PostgreSQL, on a machine with nothing else running).
   */
  apiCpuUs: number;
  loaderCpuUs: number;
  restCpuUs: number;
}

const DB = 'bootorch_bench_reports';

/** `n` nodes, stable and with a known boot token, and one node token per node (bulk, not one transaction each). */
export async function seedReportingNodes(
  conn: Connection,
  n: number,
  tag = 'bench',
): Promise<{ ids: string[]; tokens: string[]; bssToken: string }> {
  const ids = Array.from({ length: n }, (_, i) => `x${1000 + Math.floor(i / 512)}c0s${Math.floor((i % 512) / 8)}b0n${i % 8}`);
  await conn.pool.query(`insert into components (id, last_action) select unnest($1::text[]), 'newly_discovered'`, [ids]);
  const bssToken = `${tag}-token`;
  await conn.pool.query(
    `insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ($1, 'k', 'p', 'i') on conflict do nothing`,
    [bssToken],
  );
  const tokens = ids.map((_, i) => `bto_${i.toString(16).padStart(16, '0')}_${'A'.repeat(43 - String(i).length)}${i}`);
  await conn.pool.query(
    `insert into api_tokens (id, hash, role, tenant, subject) select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
    [tokens.map((t) => t.slice(4, 20)), tokens.map(hashApiToken), ids.map(() => 'node'), ids.map(() => null), ids],
  );
  // As on a running site, the planner has statistics of these tables (autovacuum would take them
  // within a minute; without them the first round ran on guesses).
  await conn.pool.query('analyze components, api_tokens, boot_artifacts');
  return { ids, tokens, bssToken };
}

/** autocannon against `url` for `seconds`, each request a report by node i (round robin) with node i's token. */
export async function fireReports(
  url: string,
  nodes: { ids: string[]; tokens: string[]; bssToken: string },
  connections: number,
  seconds: number,
): Promise<Omit<ReportLoadRow, 'load' | 'path' | 'apiCpuUs' | 'restCpuUs' | 'loaderCpuUs'>> {
  let next = 0;
  let accepted = 0;
  let refused = 0;
  const bodies = nodes.ids.map((id) => JSON.stringify({ query: REPORT_MUTATION, variables: { id, token: nodes.bssToken } }));
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    requests: [
      {
        setupRequest: (req) => {
          const i = next++ % nodes.ids.length;
          return {
            ...req,
            method: 'POST',
            body: bodies[i],
            headers: { 'content-type': 'application/json', authorization: `Bearer ${nodes.tokens[i]}` },
          };
        },
        onResponse: (status, body) => {
          if (status === 200 && body.includes('BootStateReported')) accepted++;
          else refused++;
        },
      },
    ],
  });
  return {
    connections,
    acceptedPerSecond: accepted / seconds,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: refused + r.errors + r.timeouts,
  };
}

/**
 * Every path in its own API process, all started first, then fired at in turn at each connection
 * count, `rounds` times over: the paths share the machine's load of the moment (on a shared machine
 * the load moves by more than the difference between paths in a minute), so the ratios mean something.
 */
export async function runReportLoad(
  adminUrl: string,
  o: { nodes?: number; seconds?: number; connections?: number[]; rounds?: number; before?: string } = {},
): Promise<ReportLoadRow[]> {
  const conn = await freshDatabase(adminUrl, DB);
  const nodes = await seedReportingNodes(conn, o.nodes ?? 4096);
  const rows: ReportLoadRow[] = [];
  const apis = new Map<ReportLoadRow['path'], { url: string; child: ChildProcess }>();
  try {
    const baseline = o.before;
    const all = [...(baseline ? ['baseline' as const] : []), 'fast' as const];
    // REPORT_PATHS=fast,baseline: only these, in this order (profiling one path).
    const only = process.env.REPORT_PATHS?.split(',');
    const paths = only ? (only.filter((p) => (all as string[]).includes(p)) as typeof all) : all;
    for (const path of paths) {
      const api = await startApiProcess(conn, {}, path === 'baseline' ? baseline : undefined);
      apis.set(path, api);
      await fireReports(api.url, nodes, 16, 2); // warm-up: JIT, pool connections, cached tokens
    }
    for (let round = 0; round < (o.rounds ?? 1); round++)
      for (const c of o.connections ?? [64, 512])
        for (const path of paths) {
          const load = os.loadavg()[0]!;
          const api = apis.get(path)!;
          const cpu = () => [cpuSeconds(api.child.pid), cpuSeconds(process.pid), machineCpuSeconds()] as const;
          const c0 = cpu();
          const r = await fireReports(api.url, nodes, c, o.seconds ?? 10);
          const c1 = cpu();
          const per = (i: number) => ((c1[i]! - c0[i]!) / (r.acceptedPerSecond * (o.seconds ?? 10))) * 1e6;
          rows.push({ path, ...r, load, apiCpuUs: per(0), loaderCpuUs: per(1), restCpuUs: per(2) - per(0) - per(1) });
        }
    return rows;
  } finally {
    for (const api of apis.values()) api.child.kill('SIGTERM');
    await conn.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('set DATABASE_URL');
  const rows = await runReportLoad(url, {
    seconds: Number(process.env.SECONDS ?? 10),
    rounds: Number(process.env.ROUNDS ?? 1),
    connections: process.env.CONNECTIONS?.split(',').map(Number),
    nodes: process.env.NODES ? Number(process.env.NODES) : undefined,
    before: process.argv.find((a) => a.startsWith('--before='))?.slice(9),
  });
  for (const r of rows)
    process.stdout.write(
      `${r.path} ${r.connections} connections: ${r.acceptedPerSecond.toFixed(0)} accepted/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.errors} not accepted, CPU per report: API ${r.apiCpuUs.toFixed(0)} µs, load generator ${r.loaderCpuUs.toFixed(0)} µs, rest ${r.restCpuUs.toFixed(0)} µs, load ${r.load.toFixed(2)}\n`,
    );
  process.exit(0);
}
