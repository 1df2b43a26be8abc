/**
 * A standalone site as it is deployed: `bootorch api` and `bootorch worker` as processes with
 * BOOTORCH_ADAPTERS=standalone, the nodes' BMCs the simulator's Redfish face (over HTTP), nodes
 * registered through the API, and each node played by this test as firmware and image would: once
 * its BMC says on, fetch its boot script by MAC and run the shell reporter with that command line.
 * A BOOT session over Redfish completes, with its configuration hook run after the reports; a
 * SHUTDOWN powers the nodes off through GracefulShutdown.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, ROOT, type RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { redfishBootOverride } from '../../src/sim/http/redfish.ts';
import { freePort } from '../helpers/ports.ts';

let db: TestDb;
let world: SimWorld;
let sim: SimServer;
let api: RoleProcess;
let worker: RoleProcess;
let base: string;
let token: string;
let ids: string[];
let hooks: string;
const macOf = (i: number) => `52:54:00:00:05:0${i}`;

const gql = async (query: string, variables: Record<string, unknown> = {}) => {
  const r = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
};

/** Polls `cond` every 200 ms until it holds or the deadline passes (the roles' output on failure). */
async function until(cond: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  await waitFor(cond, what, timeoutMs, () => `api:\n${api.output()}\nworker:\n${worker.output()}`);
}

/** What firmware and the image do on one node: boot script by MAC, then the reporter with its command line. */
async function nodeBoots(i: number): Promise<string> {
  const script = await (await fetch(`${base}/boot/v1/bootscript?mac=${encodeURIComponent(macOf(i))}`)).text();
  const cmdline = /^kernel \S+ (.*) \|\| goto kernel_failed$/m.exec(script)?.[1];
  if (!cmdline) throw new Error(`no kernel line in:\n${script}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-node-'));
  writeFileSync(path.join(dir, 'cmdline'), cmdline);
  return new Promise((resolve, reject) =>
    execFile(
      'sh',
      [path.join(ROOT, 'src/api/boot/reporter.sh')],
      {
        env: { PATH: process.env.PATH, BOOTORCH_CMDLINE: path.join(dir, 'cmdline'), BOOTORCH_REPORT_ATTEMPTS: '5' },
        timeout: 60_000,
      },
      (err, stdout, stderr) => (err ? reject(new Error(`${stdout}${stderr}`)) : resolve(stdout)),
    ),
  );
}

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [
    JSON.stringify({
      polling_frequency: 2,
      transit_polling_frequency: 0.5,
      discovery_frequency: 1,
      max_power_off_wait_time: 3,
      max_power_on_wait_time: 20,
      max_boot_wait_time: 60,
      default_retry_policy: 2,
    }),
  ]);
  world = new SimWorld({ nodes: 2, initial: { power: 'off' }, powerOnDelayMs: 200, powerOffDelayMs: 200, forceOffDelayMs: 50 });
  sim = await startSimServer(world);
  ids = world.ids();
  token = (await createApiToken(db.db, { role: 'admin', subject: 'tester' })).token;
  const files = mkdtempSync(path.join(os.tmpdir(), 'bootorch-files-'));
  writeFileSync(
    path.join(files, 'manifest.json'),
    JSON.stringify({
      artifacts: [
        { type: 'application/vnd.cray.image.kernel', link: { path: 'vmlinuz' } },
        { type: 'application/vnd.cray.image.initrd', link: { path: 'initrd.gz' } },
      ],
    }),
  );
  hooks = mkdtempSync(path.join(os.tmpdir(), 'bootorch-hooks-'));
  writeFileSync(path.join(hooks, 'site-setup'), `#!/bin/sh\necho "$@" >> ${hooks}/site-setup.log\n`, { mode: 0o755 });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    BOOTORCH_ADAPTERS: 'standalone',
    DATABASE_URL: db.url,
    BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
    BOOTORCH_BOOT_FILES: files,
    BOOTORCH_CONFIG_HOOKS: hooks,
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(port),
    LOG_LEVEL: 'info',
  };
  api = startRole('api', env);
  worker = startRole('worker', env);
  await Promise.all([api.waitFor(/api listening/), worker.waitFor(/worker running/)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([api?.stop(), worker?.stop()]);
  await sim?.close();
  world?.close();
  await db?.drop();
});

describe('standalone roles as processes, Redfish BMCs', { timeout: 180_000 }, () => {
  it('registers, boots over Redfish with the shell reporter, and shuts down', async () => {
    await gql(`mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname } }`, {
      n: ids.map((xname, i) => ({
        xname,
        mac: macOf(i),
        groups: ['rack'],
        bmc: { driver: 'REDFISH', address: `${sim.url}/redfish/v1/Systems/${xname}`, username: 'root', password: 'calvin' },
      })),
    });
    await until(async () => (await db.pool.query('select count(*)::int as n from components')).rows[0].n === 2, 'discovery', 30_000);
    await gql(`mutation($i: SessionTemplateInput!) { putSessionTemplate(name: "rack", input: $i) { template { name } } }`, {
      i: {
        enableCfs: true,
        cfs: { configuration: 'site-setup' },
        bootSets: [{ name: 'all', type: 's3', path: 'manifest.json', kernelParameters: 'console=ttyS0', nodeGroups: ['rack'] }],
      },
    });
    await gql(`mutation { createSession(input: { name: "b1", operation: BOOT, templateName: "rack" }) { session { name } } }`);

    await world.waitUntil(() => ids.every((id) => world.node(id)!.power === 'on'), 60_000, 'nodes powered on over Redfish');
    for (const id of ids) expect(redfishBootOverride(world, id).BootSourceOverrideTarget).toBe('Pxe');
    const out = await Promise.all(ids.map((_, i) => nodeBoots(i)));
    out.forEach((o, i) => expect(o).toContain(`bootorch-report: ${ids[i]} reported`));
    await until(
      async () => (await db.pool.query(`select status from sessions where name = 'b1'`)).rows[0]?.status === 'complete',
      'boot session',
      60_000,
    );
    const rows = (
      await db.pool.query('select id, status, actual_kernel, actual_bss_token = desired_bss_token as same from components order by id')
    ).rows;
    expect(rows).toEqual(ids.map((id) => ({ id, status: 'stable', actual_kernel: 'vmlinuz', same: true })));
    // The configuration hook ran once the nodes had reported, for both (one run or one each).
    expect(readFileSync(path.join(hooks, 'site-setup.log'), 'utf8').split(/\s+/).filter(Boolean).sort()).toEqual([...ids].sort());

    await gql(`mutation { createSession(input: { name: "s1", operation: SHUTDOWN, templateName: "rack" }) { session { name } } }`);
    await until(
      async () => (await db.pool.query(`select status from sessions where name = 's1'`)).rows[0]?.status === 'complete',
      'shutdown session',
      60_000,
    );
    expect(ids.map((id) => world.node(id)!.power)).toEqual(['off', 'off']);
    expect(world.counters.transitionCount('Soft-Off', ids[0]!)).toBe(1);
  });
});
