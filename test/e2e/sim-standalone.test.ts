/**
 * `bootorch sim --standalone` as a site without CSM, three processes: the simulator (a Redfish BMC per
 * node, each at its own loopback address on one listener), `bootorch api` and `bootorch worker` with
 * BOOTORCH_ADAPTERS=standalone. The simulator's nodes are registered from the file it writes, with
 * `bootorch node apply -f` (the operator's door). A REBOOT over Redfish: every node powered off and on
 * through its own BMC, network-booted from /boot/v1 by MAC from an address of its own, its ticket traded
 * for a node credential, and its report accepted with that credential. One node's BMC answers 503 to
 * every call until it has said so twice (a call bootorch asked again after the first 503's Retry-After),
 * then answers again: bootorch retries it and it ends up like the others.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { freePort } from '../helpers/global-setup.ts';
import { createApiToken } from '../../src/auth/index.ts';

const NODES = 20;
let db: TestDb;
let sim: RoleProcess;
let api: RoleProcess;
let worker: RoleProcess;
let base: string;
let simUrl: string;
let admin: string;
let nodesFile: string;
let busyNode: string;

const output = () => `sim:\n${sim?.output()}\napi:\n${api?.output().slice(-4000)}\nworker:\n${worker?.output().slice(-4000)}`;

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const r = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: unknown; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
};

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [
    JSON.stringify({
      polling_frequency: 2,
      transit_polling_frequency: 0.5,
      discovery_frequency: 1,
      max_power_off_wait_time: 10,
      max_power_on_wait_time: 30,
      max_boot_wait_time: 60,
      default_retry_policy: 3,
    }),
  ]);
  admin = (await createApiToken(db.db, { role: 'admin', subject: 'tester' })).token;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-sim-standalone-'));
  writeFileSync(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      artifacts: [
        { type: 'application/vnd.cray.image.kernel', link: { path: 'vmlinuz' } },
        { type: 'application/vnd.cray.image.initrd', link: { path: 'initrd.gz' } },
      ],
    }),
  );
  nodesFile = path.join(dir, 'nodes.json');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // One node's BMC answers 503 (Retry-After 1 s) to every call, until the test lets it recover.
  busyNode = 'x1000c0s3b0n0';
  sim = startRole('sim', {}, [
    '--standalone',
    '--boot-url',
    base,
    '--nodes',
    String(NODES),
    '--timing',
    'fast',
    '--initial',
    'booted',
    '--nodes-file',
    nodesFile,
    '--fault',
    `bmcBusy=${busyNode}`,
    '--fault',
    'bmc:busyStatus=503',
    '--fault',
    'bmc:retryAfter=1',
  ]);
  simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/, 120_000))[1]!;
  const env = {
    BOOTORCH_ADAPTERS: 'standalone',
    DATABASE_URL: db.url,
    BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
    BOOTORCH_BOOT_FILES: dir,
    BOOTORCH_BOOT_URL: base,
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(port),
  };
  api = startRole('api', env);
  worker = startRole('worker', { ...env, LOG_LEVEL: 'info' });
  await Promise.all([api.waitFor(/bootorch api: /, 120_000), worker.waitFor(/worker running/, 120_000)]);
}, 240_000);

afterAll(async () => {
  await Promise.all([sim?.stop(), api?.stop(), worker?.stop()]);
  await db?.drop();
});

describe('bootorch sim --standalone: api, worker and sim processes over Redfish and /boot/v1', { timeout: 300_000 }, () => {
  it('reboots every node through its own BMC; each network-boots, trades its ticket and reports with its own credential', async () => {
    const file = JSON.parse(readFileSync(nodesFile, 'utf8')) as { nodes: Array<{ xname: string; mac: string; bmc: { address: string } }> };
    expect(file.nodes).toHaveLength(NODES);
    // Each BMC is a host:port of its own (bootorch's per-BMC turn and circuit key).
    const keys = new Set(file.nodes.map((n) => new URL(n.bmc.address).host));
    expect(keys.size).toBe(NODES);
    const ids = file.nodes.map((n) => n.xname).sort();

    const applied = await runCli(['node', 'apply', '-f', nodesFile], {
      BOOTORCH_URL: base,
      BOOTORCH_TOKEN: admin,
      SIM_BMC_PASSWORD: 'calvin',
    });
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain(`${NODES} nodes registered`);
    await waitFor(
      async () => (await db.pool.query('select count(*)::int as n from components')).rows[0].n === NODES,
      'discovery of the registered nodes',
      60_000,
      output,
    );
    await gql(`mutation($i: SessionTemplateInput!) { putSessionTemplate(name: "sa", input: $i) { template { name } } }`, {
      i: { enableCfs: false, bootSets: [{ name: 'all', type: 's3', path: 'manifest.json', nodeRolesGroups: ['Compute'] }] },
    });
    await gql(`mutation { createSession(input: { name: "r1", operation: REBOOT, templateName: "sa" }) { session { name } } }`);
    // The busy BMC said 503 twice, so bootorch asked it again after the first one; then it recovers.
    const counters = async () => (await (await fetch(`${simUrl}/sim/counters`)).json()) as { bmc: { busyAnswers: number } };
    await waitFor(async () => (await counters()).bmc.busyAnswers >= 2, 'two 503 answers from the busy BMC', 120_000, output);
    const cleared = await fetch(`${simUrl}/sim/faults`, { method: 'POST', body: JSON.stringify({ bmc: { busyRate: 0 } }) });
    expect(cleared.status).toBe(200);
    await waitFor(
      async () => (await db.pool.query(`select status from sessions where name = 'r1'`)).rows[0]?.status === 'complete',
      'the reboot session complete',
      240_000,
      output,
    );

    const rows = (
      await db.pool.query<{ id: string; status: string; same: boolean }>(
        `select id, status, desired_bss_token <> '' and actual_bss_token = desired_bss_token as same from components order by id`,
      )
    ).rows;
    expect(rows).toEqual(ids.map((id) => ({ id, status: 'stable', same: true })));
    // Every node reported with a credential of its own: a report-scoped node token per node, from its exchange.
    const creds = (
      await db.pool.query<{ subject: string; n: number }>(
        `select subject, count(*)::int as n from api_tokens where role = 'node' and scope = 'report' group by subject order by subject`,
      )
    ).rows;
    expect(creds).toEqual(ids.map((subject) => ({ subject, n: 1 })));
    const reports = (
      await db.pool.query<{ component_id: string; actor: string }>(
        `select distinct component_id, actor from component_events where kind = 'report' order by component_id`,
      )
    ).rows;
    expect(reports).toEqual(ids.map((id) => ({ component_id: id, actor: `node:${id}` })));

    const c = (await (await fetch(`${simUrl}/sim/counters`)).json()) as {
      transitions: Record<string, Record<string, number>>;
      bmc: { maxInFlightPerNode: number; busyAnswers: number };
      pxe: { scripts: number; exchanges: number; failed: number };
      reports: { delivered: number };
    };
    // Off and on through each node's own BMC, one call at a time per BMC.
    for (const id of ids) {
      expect(c.transitions['Soft-Off']?.[id] ?? 0).toBeGreaterThanOrEqual(1);
      expect(c.transitions.On?.[id]).toBeGreaterThanOrEqual(1);
    }
    expect(c.bmc.maxInFlightPerNode).toBe(1);
    expect(c.bmc.busyAnswers).toBeGreaterThanOrEqual(2);
    expect(c.pxe.exchanges).toBeGreaterThanOrEqual(NODES);
    expect(c.pxe.scripts).toBeGreaterThanOrEqual(NODES);
    expect(c.pxe.failed).toBe(0);
    expect(c.reports.delivered).toBeGreaterThanOrEqual(NODES);
  });
});
