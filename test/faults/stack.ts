/**
 * A whole bootorch as separate processes, for the fault tests: `bootorch sim` (its nodes reporting
 * over HTTP with their own node tokens), one or more `bootorch api`, and `bootorch worker` with
 * BOOTORCH_ADAPTERS=http, all on one database. Processes can be killed (SIGKILL) and started again.
 * Every wait polls a condition against a deadline; nothing sleeps.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';

export { waitFor };

export interface StackOptions {
  /** PostgreSQL URL of the (already created) database. */
  databaseUrl: string;
  nodes: number;
  /** `fast` (tenths of a second) or `interactive` (seconds). */
  timing: 'fast' | 'interactive';
  /** API processes to start (default 1). */
  apis?: number;
  /** Extra environment for every bootorch process. */
  env?: Record<string, string>;
  /** And for the worker processes only (after env). */
  workerEnv?: Record<string, string>;
}

export interface Stack {
  simUrl: string;
  simEnv: Record<string, string>;
  apiUrls: string[];
  apis: RoleProcess[];
  worker: RoleProcess;
  /** Environment the api and worker processes run with. */
  env: Record<string, string>;
  tokensDir: string;
  /** A worker process (`env` added to the stack's). */
  startWorker(env?: Record<string, string>): RoleProcess;
  startApi(port?: number): Promise<{ proc: RoleProcess; url: string }>;
  /** Mint a reporter token for every node HSM lists (bootorch token nodes), where the simulated nodes read them. */
  mintNodeTokens(): Promise<void>;
  simGet(p: string): Promise<any>;
  simFaults(change: Record<string, unknown>): Promise<void>;
  logs(): string;
  stop(): Promise<void>;
}

import { freePort } from '../helpers/ports.ts';

export { freePort };

/** SIGKILL and wait for the exit. */
export function kill(p: RoleProcess): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    p.proc.once('exit', () => resolve());
    p.proc.kill('SIGKILL');
  });
}

export async function gql(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

export async function startStack(o: StackOptions): Promise<Stack> {
  const tokensDir = mkdtempSync(path.join(tmpdir(), 'bootorch-fault-tokens-'));
  const apiPorts = await Promise.all(Array.from({ length: o.apis ?? 1 }, () => freePort()));
  const all: RoleProcess[] = [];
  const track = (p: RoleProcess) => {
    all.push(p);
    return p;
  };
  // The nodes report to the first API: it is the one a node's BOOTORCH_URL names.
  const sim = track(
    startRole('sim', o.env ?? {}, [
      '--nodes',
      String(o.nodes),
      '--port',
      '0',
      '--timing',
      o.timing,
      '--bootorch-url',
      `http://127.0.0.1:${apiPorts[0]}/graphql`,
      '--report-tokens-dir',
      tokensDir,
    ]),
  );
  const simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/))[1]!;
  const simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const env: Record<string, string> = {
    DATABASE_URL: o.databaseUrl,
    BOOTORCH_ADAPTERS: 'http',
    BOOTORCH_AUTH_MODE: 'tokens',
    HSM_URL: simEnv.HSM_URL!,
    PCS_URL: simEnv.PCS_URL!,
    BSS_URL: simEnv.BSS_URL!,
    CFS_URL: simEnv.CFS_URL!,
    S3_URL: simEnv.S3_URL!,
    ...o.env,
  };
  const stack: Stack = {
    simUrl,
    simEnv,
    apiUrls: [],
    apis: [],
    worker: undefined as unknown as RoleProcess,
    env,
    tokensDir,
    startWorker(extra = {}) {
      stack.worker = track(startRole('worker', { ...env, ...o.workerEnv, ...extra }));
      return stack.worker;
    },
    async startApi(port) {
      const proc = track(startRole('api', { ...env, PORT: String(port ?? 0) }));
      const url = (await proc.waitFor(/bootorch api: (\S+)/, 60_000))[1]!;
      return { proc, url };
    },
    async mintNodeTokens() {
      const minted = await runCli(['token', 'nodes', '--from-hsm', simEnv.HSM_URL!, '--out', tokensDir], { DATABASE_URL: o.databaseUrl });
      if (minted.code !== 0) throw new Error(`bootorch token nodes failed: ${minted.stderr}`);
    },
    async simGet(p) {
      const r = await fetch(`${simUrl}${p}`);
      if (r.status !== 200) throw new Error(`GET ${p}: ${r.status}`);
      return r.json();
    },
    async simFaults(change) {
      const r = await fetch(`${simUrl}/sim/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(change),
      });
      if (r.status !== 200) throw new Error(`POST /sim/faults: ${r.status} ${await r.text()}`);
    },
    logs: () =>
      all
        .map((p, i) => `--- process ${i} (${p.proc.spawnargs.slice(3, 4).join(' ')}, last 1500 chars):\n${p.output().slice(-1500)}`)
        .join('\n'),
    async stop() {
      await Promise.all(all.map((p) => p.stop()));
      rmSync(tokensDir, { recursive: true, force: true });
    },
  };
  // One after the other: first starts at once on a fresh database can deadlock in pg-boss's queue creation.
  for (const port of apiPorts) {
    const a = await stack.startApi(port);
    stack.apis.push(a.proc);
    stack.apiUrls.push(a.url);
  }
  stack.startWorker();
  return stack;
}

/** The options the fault tests run with: fast loops, and hardware waits wide enough for processes that come and go. */
export const FAULT_OPTIONS = {
  polling_frequency: 2,
  transit_polling_frequency: 0.5,
  max_power_off_wait_time: 15,
  max_power_on_wait_time: 30,
  max_boot_wait_time: 120,
  discovery_frequency: 2,
  cleanup_completed_session_ttl: '0',
  default_retry_policy: 3,
};
