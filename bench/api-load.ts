/**
 * The API under load: a separate `bootorch api` process answers paged components queries and the
 * session status while the engine reboots N nodes; then reporter mutations are fired at it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createApiToken } from '../src/auth/api-tokens.ts';
import type { Connection } from '../src/db/client.ts';
import { runScale } from './scale.ts';

export interface Latency {
  count: number;
  p50: number;
  p99: number;
}
export interface ApiLoadResult {
  nodes: number;
  clients: number;
  components: Latency;
  status: Latency;
  reportClients: number;
  reportsPerSecond: number;
  reportSeconds: number;
  apiPeakRssMb: number;
}

export function percentiles(xs: number[]): Latency {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN);
  return { count: s.length, p50: at(0.5), p99: at(0.99) };
}

/** `bootorch api` in a child process; `cwd`: another checkout to run it from (default this one). */
export async function startApiProcess(
  conn: Connection,
  extraEnv: Record<string, string> = {},
  cwd?: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [...(process.env.API_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/apiprof'] : []), '--import', 'tsx', 'src/main.ts', 'api'],
    {
      cwd,
      env: { ...process.env, DATABASE_URL: conn.url, PORT: '0', LOG_LEVEL: 'warn', BOOTORCH_RATE_LIMIT_BURST: '0', ...extraEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      if (process.env.BENCH_API_LOG) process.stderr.write(d);
      out += d.toString();
      const m = /bootorch api: (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`api process exited (${code}) before listening`)));
  });
  return { url, child };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(after[11]) + Number(after[12])) / 100; // utime, stime in clock ticks (USER_HZ, 100 on Linux)
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds used so far by every process named `comm` (e.g. `postgres`: the server and its backends), from /proc. */
export function processesCpuSeconds(comm: string): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (f.slice(f.indexOf('(') + 1, f.lastIndexOf(')')) !== comm) continue;
      const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
      total += (Number(after[11]) + Number(after[12])) / 100;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

/**
 * CPU seconds the whole machine has used so far, every core (Linux /proc/stat: user, nice, system, irq,
 * softirq). Steal time is left out: it is the host running someone else while this machine waited.
 */
export function machineCpuSeconds(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8');
  const v = f.slice(0, f.indexOf('\n')).split(/\s+/).slice(1).map(Number);
  return (v[0]! + v[1]! + v[2]! + v[5]! + v[6]!) / 100;
}

export function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function runApiLoad(adminUrl: string, nodes: number, clients = 4): Promise<ApiLoadResult> {
  let api: { url: string; child: ChildProcess } | undefined;
  let token = '';
  let stop = false;
  const comp: number[] = [];
  const stat: number[] = [];
  const loops: Promise<void>[] = [];
  let conn!: Connection;
  const call = async (query: string, variables: Record<string, unknown> = {}) => {
    const r = await fetch(api!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await r.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors).slice(0, 300));
    return body.data;
  };
  let errors = 0;
  let firstError = '';
  const timed = async (into: number[], f: () => Promise<unknown>) => {
    const t = performance.now();
    try {
      await f();
      into.push(performance.now() - t);
    } catch (e) {
      errors++;
      firstError ||= String(e);
    }
  };

  let done = 0;
  let seconds = 5;
  const reportClients = 32;
  const reporterThroughput = async () => {
    // Reporter throughput: nodes are stable now, so every report is accepted and written.
    const tokenRow = (await conn.pool.query('select token from boot_artifacts limit 1')).rows[0];
    const ids: string[] = (await conn.pool.query('select id from components order by id')).rows.map((r) => r.id);
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: reportClients }, async (_, k) => {
        for (let i = k; performance.now() < until; i += reportClients) {
          await timed([], () =>
            call('mutation($id: ID!, $t: String!) { reportBootState(id: $id, bssToken: $t) { __typename } }', {
              id: ids[i % ids.length],
              t: tokenRow?.token ?? 'x',
            }),
          );
          done++;
        }
      }),
    );
    return { done, seconds };
  };
  await runScale(adminUrl, nodes, {
    tag: '_api',
    hooks: {
      async ready(c) {
        conn = c;
        token = (await createApiToken(c.db, { role: 'admin', subject: 'bench' })).token;
        api = await startApiProcess(c);
        for (let i = 0; i < clients; i++) {
          loops.push(
            (async () => {
              let after: string | null = null;
              while (!stop) {
                if (i % 2 === 0) {
                  await timed(comp, async () => {
                    const d = await call(
                      'query($a: String) { components(first: 100, after: $a) { nodes { id status { status } } pageInfo { endCursor hasNextPage } } }',
                      { a: after },
                    );
                    after = d.components.pageInfo.hasNextPage ? d.components.pageInfo.endCursor : null;
                  });
                } else {
                  await timed(stat, () => call('{ sessionStatus(name: "bench") { percentSuccessful phases { percentPoweringOn } } }'));
                }
              }
            })(),
          );
        }
      },
      async finished() {
        stop = true;
        await Promise.all(loops);
        ({ done, seconds } = await reporterThroughput());
      },
    },
  }).catch(async (e) => {
    api?.child.kill('SIGKILL');
    throw e;
  });
  if (errors) process.stderr.write(`api-load: ${errors} failed requests, first: ${firstError.slice(0, 300)}\n`);
  const rss = peakRssMb(api!.child.pid!);
  void seconds;
  api!.child.kill('SIGTERM');
  return {
    nodes,
    clients,
    components: percentiles(comp),
    status: percentiles(stat),
    reportClients,
    reportsPerSecond: done / seconds,
    reportSeconds: seconds,
    apiPeakRssMb: rss,
  };
}
