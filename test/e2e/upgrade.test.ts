/**
 * A rolling upgrade (docs/production.md, "Upgrades and roll-back"): the previous release's worker
 * (scripts/migrations-policy.json previousRelease, its sources from test/helpers/previous-release.ts,
 * run through tsx) against this checkout's schema. An empty database is migrated by the previous
 * release's `bootorch migrate` (the site before the upgrade), then by this checkout's (the upgrade's
 * migration job); this checkout's `bootorch sim` (100 nodes over HTTP) and `bootorch api` start, with
 * the previous release's `bootorch worker`. A reboot of every node completes with each node booted
 * and on (one graceful off and one on each). Then the worker is replaced by this checkout's (the
 * upgrade's last step) and a second reboot completes the same way. Only with BOOTORCH_UPGRADE_TESTS=1
 * (.ci/run's upgrade phase); needs the repository's history (a clone of main).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { connect, type Connection } from '../../src/db/client.ts';
import { FAST_OPTIONS } from '../helpers/cluster.ts';
import { withDatabase } from '../helpers/global-setup.ts';
import { previousRelease, type PreviousRelease } from '../helpers/previous-release.ts';
import { runCli, SOURCES, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor as waitUntil } from '../helpers/wait.ts';
import { freePort } from '../helpers/ports.ts';

const on = process.env.BOOTORCH_UPGRADE_TESTS === '1';
const NODES = 100;
const OPTIONS = {
  ...FAST_OPTIONS,
  max_power_off_wait_time: 20,
  max_power_on_wait_time: 20,
  max_boot_wait_time: 120,
  default_retry_policy: 3,
};

let release: PreviousRelease;
let dbName: string;
let dbUrl: string;
let conn: Connection;
let sim: RoleProcess;
let api: RoleProcess;
let worker: RoleProcess;
let env: Record<string, string>;
let apiUrl: string;
let simUrl: string;
let adminToken: string;
let tokensDir: string;

const logs = () =>
  [
    ['sim', sim],
    ['api', api],
    ['worker', worker],
  ]
    .map(([n, p]) => `--- ${n} (last 2000 chars):\n${(p as RoleProcess | undefined)?.output().slice(-2000) ?? ''}`)
    .join('\n');
const waitFor = <T>(cond: () => Promise<T | undefined | false>, what: string, timeoutMs: number) => waitUntil(cond, what, timeoutMs, logs);

async function gql(query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: Record<string, { [k: string]: unknown }>; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: inject('adminUrl') });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

type Transitions = Record<string, Record<string, number> | undefined>;
const transitions = async () => ((await (await fetch(`${simUrl}/sim/counters`)).json()) as { transitions: Transitions }).transitions;

/** A reboot of every node through the API: complete, every node stable and booted, `times` offs and ons each so far. */
async function rebootAll(name: string, times: number): Promise<number> {
  const started = Date.now();
  await gql(
    `mutation($n: String!) { createSession(input: { operation: REBOOT, templateName: "compute", name: $n }) { session { name } } }`,
    {
      n: name,
    },
  );
  const s = await waitFor(
    async () => {
      const row = (await conn.pool.query('select * from sessions where name = $1', [name])).rows[0];
      return row?.status === 'complete' ? row : undefined;
    },
    `session ${name} complete`,
    180_000,
  );
  expect(s.error).toBeNull();
  expect(s.components.split(',')).toHaveLength(NODES);
  const rows = (await conn.pool.query('select * from components order by id')).rows;
  expect(rows).toHaveLength(NODES);
  for (const r of rows) {
    expect(r, r.id).toMatchObject({ status: 'stable', phase: '', error: '' });
    expect(r.actual_kernel, r.id).toBeTruthy();
  }
  const t = await transitions();
  for (const r of rows) {
    expect(t['Soft-Off']?.[r.id] ?? 0, `Soft-Off ${r.id}`).toBe(times);
    expect(t.On?.[r.id] ?? 0, `On ${r.id}`).toBe(times);
  }
  expect(t['Force-Off'] ?? {}).toEqual({});
  return Date.now() - started;
}

beforeAll(async () => {
  if (!on) return;
  release = previousRelease();
  dbName = `bootorch_upgrade_${process.pid}`;
  await admin((c) => c.query(`drop database if exists ${dbName} with (force)`).then(() => c.query(`create database ${dbName}`)));
  dbUrl = withDatabase(inject('adminUrl'), dbName);
  // The site before the upgrade: the previous release's schema and queues.
  const before = await runCli(['migrate'], { DATABASE_URL: dbUrl }, 180_000, SOURCES, release.root);
  expect(before.code, before.stderr).toBe(0);
  // The upgrade's migration job, first.
  const job = await runCli(['migrate'], { DATABASE_URL: dbUrl }, 180_000);
  expect(job.code, job.stderr).toBe(0);
  conn = connect(dbUrl, { max: 4 });
  await conn.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(OPTIONS)]);
  adminToken = (await createApiToken(conn.db, { role: 'admin', subject: 'upgrade-test' })).token;
  tokensDir = mkdtempSync(path.join(tmpdir(), 'bootorch-upgrade-tokens-'));
  const apiPort = await freePort();
  sim = startRole('sim', {}, [
    ...['--nodes', String(NODES), '--port', '0', '--timing', 'fast'],
    ...['--bootorch-url', `http://127.0.0.1:${apiPort}/graphql`, '--report-tokens-dir', tokensDir],
  ]);
  simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/))[1]!;
  const simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  env = {
    DATABASE_URL: dbUrl,
    BOOTORCH_ADAPTERS: 'http',
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(apiPort),
    ...Object.fromEntries(['HSM_URL', 'PCS_URL', 'BSS_URL', 'CFS_URL', 'S3_URL'].map((k) => [k, simEnv[k]!])),
  };
  api = startRole('api', env);
  apiUrl = (await api.waitFor(/bootorch api: (\S+)/))[1]!;
  // The previous release's worker, from its own sources.
  worker = startRole('worker', env, [], [], SOURCES, release.root);
  await waitFor(
    async () => Number((await conn.pool.query('select count(*) from components')).rows[0].count) === NODES,
    `${NODES} components discovered by the previous release's worker`,
    90_000,
  );
  const minted = await runCli(['token', 'nodes', '--from-hsm', simEnv.HSM_URL!, '--out', tokensDir], { DATABASE_URL: dbUrl });
  expect(minted.code, minted.stderr).toBe(0);
  const image = (await (await fetch(`${simUrl}/sim/info`)).json()) as { defaultImage: { manifest: string } };
  await gql(
    `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
    { b: [{ name: 'compute', path: image.defaultImage.manifest, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
  );
}, 300_000);

afterAll(async () => {
  await Promise.all([sim?.stop(), api?.stop(), worker?.stop()]);
  await conn?.close();
  if (dbName && !process.env.KEEP_TEST_DB) await admin((c) => c.query(`drop database if exists ${dbName} with (force)`));
  if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
});

describe.skipIf(!on)('rolling upgrade: the previous release beside this one', () => {
  test(`the previous release's worker reboots ${NODES} nodes against the new schema and the new api`, async () => {
    expect(worker.proc.spawnargs).toContain('src/main.ts');
    const ms = await rebootAll('reboot-old-worker', 1);
    process.stdout.write(
      `\nupgrade: previous release ${release.commit.slice(0, 7)} (node_modules ${release.modules}) worker + new api and schema: ${NODES}-node reboot complete in ${(ms / 1000).toFixed(1)} s\n`,
    );
  }, 240_000);

  test(`then the worker is replaced by the new one, and a second reboot completes`, async () => {
    await worker.stop();
    worker = startRole('worker', env);
    const ms = await rebootAll('reboot-new-worker', 2);
    process.stdout.write(`upgrade: new worker after the swap: ${NODES}-node reboot complete in ${(ms / 1000).toFixed(1)} s\n`);
  }, 240_000);
});
