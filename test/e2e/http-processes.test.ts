/**
 * bootorch in HTTP mode across processes: `bootorch sim` (500 nodes) in one process, `bootorch api`
 * and `bootorch worker` with BOOTORCH_ADAPTERS=http pointed at the simulator's URLs in two others, on
 * a fresh database. The worker's discovery creates the components from HSM over HTTP, the admin
 * mints a node token per node with `bootorch token nodes`, the simulated nodes' reporters report to
 * the API over HTTP with their own credentials. A reboot of all 500 nodes through the API must
 * complete with every node stable; the simulator (read over HTTP) saw one graceful off and one on per
 * node. Then faults flipped over HTTP in the running simulator (PCS down, BSS answering 500, CFS
 * slower than its read timeout) become component errors naming the service, after the clients'
 * retries, and the session completes once each recovers.
 *
 * Nothing sleeps: every wait polls a condition with a deadline.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { FAST_OPTIONS } from '../helpers/cluster.ts';
import { runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor as waitUntil } from '../helpers/wait.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { freePort } from '../helpers/ports.ts';

const NODES = 500;
/**
 * FAST_OPTIONS, with the hardware waits (upper bounds, never waited out on the happy path) wide
 * enough for 500 nodes answering over HTTP on a shared machine, and room for the fault test's
 * failed attempts (a service outage counts an attempt per try).
 */
const OPTIONS = {
  ...FAST_OPTIONS,
  max_power_off_wait_time: 20,
  max_power_on_wait_time: 20,
  max_boot_wait_time: 120,
  default_retry_policy: 10,
  // The shortest read timeout the options allow (the fault test makes CFS slower than it).
  cfs_read_timeout: 10,
};

let db: TestDb;
let sim: RoleProcess;
let api: RoleProcess;
let worker: RoleProcess;
let apiUrl: string;
let simUrl: string;
let simEnv: Record<string, string>;
let adminToken: string;
let tokensDir: string;

/** Resolves when `cond()` holds, polled every 200 ms; rejects at the deadline with the processes' logs. */
const waitFor = <T>(cond: () => Promise<T | undefined | false>, what: string, timeoutMs: number) => waitUntil(cond, what, timeoutMs, logs);

const logs = () =>
  [
    ['sim', sim],
    ['api', api],
    ['worker', worker],
  ]
    .map(([n, p]) => `--- ${n} (last 2000 chars):\n${(p as RoleProcess | undefined)?.output().slice(-2000) ?? ''}`)
    .join('\n');

async function gql(query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function simGet(p: string): Promise<any> {
  const r = await fetch(`${simUrl}${p}`);
  expect(r.status).toBe(200);
  return r.json();
}

async function simFaults(change: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${simUrl}/sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(change),
  });
  expect(r.status, await r.clone().text()).toBe(200);
}

const callsTo = (counters: any, service: string) =>
  Object.entries(counters.calls as Record<string, number>)
    .filter(([k]) => k.startsWith(`${service} `))
    .reduce((n, [, v]) => n + v, 0);

async function sessionRow(name: string) {
  return (await db.pool.query('select * from sessions where name = $1', [name])).rows[0];
}

const waitComplete = (name: string, timeoutMs: number) =>
  waitFor(
    async () => {
      const s = await sessionRow(name);
      return s?.status === 'complete' ? s : undefined;
    },
    `session ${name} complete`,
    timeoutMs,
  );

async function components(ids?: string[]) {
  return (await db.pool.query('select * from components where ($1::text[] is null or id = any($1)) order by id', [ids ?? null])).rows;
}

beforeAll(async () => {
  db = await freshDb();
  // Before the worker starts: its first ticks read the options.
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(OPTIONS)]);
  adminToken = (await createApiToken(db.db, { role: 'admin', subject: 'e2e-http' })).token;
  tokensDir = mkdtempSync(path.join(tmpdir(), 'bootorch-node-tokens-'));
  const apiPort = await freePort();

  sim = startRole('sim', {}, [
    '--nodes',
    String(NODES),
    '--port',
    '0',
    '--timing',
    'fast',
    '--bootorch-url',
    `http://127.0.0.1:${apiPort}/graphql`,
    '--report-tokens-dir',
    tokensDir,
  ]);
  simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/))[1]!;
  simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  expect(Object.keys(simEnv).sort()).toEqual(['BSS_URL', 'CFS_URL', 'HSM_URL', 'PCS_URL', 'S3_URL', 'SIM_IMAGE']);

  const env = {
    DATABASE_URL: db.url,
    BOOTORCH_ADAPTERS: 'http',
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(apiPort),
    HSM_URL: simEnv.HSM_URL!,
    PCS_URL: simEnv.PCS_URL!,
    BSS_URL: simEnv.BSS_URL!,
    CFS_URL: simEnv.CFS_URL!,
    S3_URL: simEnv.S3_URL!,
  };
  // One after the other: first starts at once on a fresh database can deadlock in pg-boss's queue creation.
  api = startRole('api', env);
  apiUrl = (await api.waitFor(/bootorch api: (\S+)/))[1]!;
  worker = startRole('worker', env);
}, 120_000);

afterAll(async () => {
  await Promise.all([sim?.stop(), api?.stop(), worker?.stop()]);
  await db?.drop();
  if (tokensDir) for (const p of [tokensDir, `${tokensDir}-cmdline`]) rmSync(p, { recursive: true, force: true });
});

describe('HTTP mode: bootorch sim + api + worker in separate processes', () => {
  test(`a reboot of ${NODES} nodes: discovered from HSM, reported over HTTP with node tokens, one graceful off and one on each`, async () => {
    // Discovery (the worker, over HSM's HTTP API) creates the components.
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      60_000,
    );

    // The admin mints a reporter credential for every node HSM lists; the simulated nodes read theirs from the directory.
    const minted = await runCli(['token', 'nodes', '--from-hsm', simEnv.HSM_URL!, '--out', tokensDir], { DATABASE_URL: db.url });
    expect(minted.code, minted.stderr).toBe(0);
    expect(minted.stderr).toContain(`issued ${NODES} node tokens`);
    const ids = readdirSync(tokensDir).sort();
    expect(ids).toEqual((await components()).map((c) => c.id));

    const info = await simGet('/sim/info');
    expect(info.defaultImage.manifest).toBe(simEnv.SIM_IMAGE);
    const t = await gql(
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    expect(t.putSessionTemplate.template.name).toBe('compute');

    const started = Date.now();
    const created = await gql(
      `mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "reboot-all" }) { session { name } } }`,
    );
    expect(created.createSession.session.name).toBe('reboot-all');
    const s = await waitComplete('reboot-all', 110_000);
    const wallMs = Date.now() - started;
    process.stdout.write(
      `\n${NODES}-node reboot over HTTP (sim + api + worker processes): ${(wallMs / 1000).toFixed(1)} s wall ` +
        `(session start->end ${((s.end_time.getTime() - s.start_time.getTime()) / 1000).toFixed(1)} s)\n`,
    );
    expect(s.error).toBeNull();
    expect(s.components.split(',')).toHaveLength(NODES);

    const kernel = `s3://boot-images/${info.defaultImage.id}/kernel`;
    const rows = await components();
    for (const r of rows) {
      expect(r, r.id).toMatchObject({ status: 'stable', phase: '', enabled: false, error: '', actual_kernel: kernel });
      expect(r.actual_kernel_parameters, r.id).toBe(r.desired_kernel_parameters);
      expect(r.actual_bss_token, r.id).toBe(r.desired_bss_token);
    }

    // Every node reported over HTTP, with its own credential (the actor comes from the token).
    const reports = await db.pool.query(`select component_id, actor from component_events where kind = 'report' and at >= $1`, [
      new Date(started),
    ]);
    expect(new Set(reports.rows.map((r) => r.component_id)).size).toBe(NODES);
    for (const r of reports.rows) expect(r.actor).toBe(`node:${r.component_id}`);

    // What the hardware saw, from the simulator over HTTP.
    const counters = await simGet('/sim/counters');
    for (const id of ids) {
      expect(counters.transitions['Soft-Off']?.[id] ?? 0, `Soft-Off ${id}`).toBe(1);
      expect(counters.transitions.On?.[id] ?? 0, `On ${id}`).toBe(1);
    }
    expect(counters.transitions['Force-Off'] ?? {}).toEqual({});
    expect(counters.reports.delivered).toBeGreaterThanOrEqual(NODES);

    // `bootorch reporter`, as a node runs it: identity and referral token from its kernel command line,
    // credential from BOOTORCH_TOKEN_FILE.
    const node = rows[0];
    const cmdline = `${tokensDir}-cmdline`;
    writeFileSync(
      cmdline,
      `BOOT_IMAGE=kernel console=ttyS0 xname=${node.id} bss_referral_token=${node.actual_bss_token} bos_update_frequency=4h\n`,
    );
    const before = Number(
      (await db.pool.query(`select count(*) from component_events where kind = 'report' and component_id = $1`, [node.id])).rows[0].count,
    );
    const agent = await runCli(
      ['reporter', '--once', '--cmdline', cmdline],
      { BOOTORCH_URL: apiUrl, BOOTORCH_TOKEN_FILE: path.join(tokensDir, node.id), NODE_IDENTITY: '' },
      30_000,
    );
    expect(agent.code, agent.stderr).toBe(0);
    expect(agent.stderr).toContain('report 1 accepted');
    const after = await db.pool.query(`select actor from component_events where kind = 'report' and component_id = $1 order by id`, [
      node.id,
    ]);
    expect(after.rows.length).toBe(before + 1);
    expect(after.rows.at(-1).actor).toBe(`node:${node.id}`);
    expect(readFileSync(path.join(tokensDir, node.id), 'utf8')).toMatch(/^bto_/);
  }, 240_000);

  test('faults flipped over HTTP: PCS down, BSS answering 500, CFS slower than its timeout -> retries, errors naming the service, then completion', async () => {
    const ids = (await components()).map((c) => c.id).slice(0, 10);
    let seen: string[] = [];
    const errorsMatch = (re: RegExp, what: string, timeoutMs: number) =>
      waitFor(
        async () => {
          const rows = await components(ids);
          seen = rows.map((r) => `${r.id} ${r.status} ${r.phase}: ${r.error}`);
          return rows.every((r) => re.test(r.error)) ? rows : undefined;
        },
        what,
        timeoutMs,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nlast seen:\n${seen.join('\n')}`);
      });

    // PCS down from the start: the power-off and status calls fail after the client's retries.
    const c0 = await simGet('/sim/counters');
    await simFaults({ services: { pcs: { down: true } } });
    await gql(
      `mutation($l: String!) { createSession(input: { operation: REBOOT, templateName: "compute", name: "faults", limit: $l }) { session { name } } }`,
      { l: ids.join(',') },
    );
    const pcsDown = await errorsMatch(/^PCS .* failed \(HTTP 503\): PCS is unavailable/, 'errors naming PCS', 60_000);
    expect(pcsDown.every((r) => r.failure_reason === 'service_unavailable' && r.enabled)).toBe(true);
    const c1 = await simGet('/sim/counters');
    // Each failed call is 1 try + 3 retries.
    expect(callsTo(c1, 'pcs') - callsTo(c0, 'pcs')).toBeGreaterThanOrEqual(4);
    expect((await sessionRow('faults')).status).not.toBe('complete');

    // PCS back, BSS answering 500: the nodes power off, then cannot get boot parameters, so are not powered on.
    await simFaults({ services: { bss: { failRate: 1 }, pcs: { down: false } } });
    await errorsMatch(/^BSS PUT \/boot\/v1\/bootparameters failed \(HTTP 500\): simulated internal error/, 'errors naming BSS', 60_000);
    const c2 = await simGet('/sim/counters');
    expect(c2.calls['bss PUT /boot/v1/bootparameters'] - (c1.calls['bss PUT /boot/v1/bootparameters'] ?? 0)).toBeGreaterThanOrEqual(4);
    for (const id of ids) expect(c2.transitions.On?.[id] ?? 0).toBe(c0.transitions.On?.[id] ?? 0);

    // BSS back, CFS slower than cfs_read_timeout (10 s, the option's minimum): timeouts naming CFS.
    await simFaults({ services: { cfs: { slowMs: 12_000 }, bss: { failRate: 0 } } });
    await errorsMatch(/^CFS .* failed: timeout: no response within 10 s/, 'errors naming CFS', 90_000);
    expect((await sessionRow('faults')).status).not.toBe('complete');

    // Everything healthy again: the session completes, every node stable without an error.
    await simFaults({ services: { cfs: { slowMs: 0 } } });
    const s = await waitComplete('faults', 90_000);
    expect(s.error).toBeNull();
    for (const r of await components(ids)) expect(r, r.id).toMatchObject({ status: 'stable', phase: '', enabled: false, error: '' });
    const c3 = await simGet('/sim/counters');
    for (const id of ids) expect(c3.transitions.On[id], `On ${id}`).toBeGreaterThan(c0.transitions.On[id]);
  }, 300_000);
});
