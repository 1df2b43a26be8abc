/**
 * Broken BMCs, with real processes: `bootorch api` and `bootorch worker` in standalone mode, IPMI
 * nodes behind real OpenIPMI ipmi_sim BMCs driven by the real ipmitool (bmc-nodes.ts: each machine a
 * process that boots and reports through bootorch's boot script and the shell reporter), and Redfish
 * nodes behind the simulator's Redfish face (one simulator per case, so each case's Redfish BMC is its
 * own, with its own circuit). Each case runs its own session, a broken node among healthy ones, and
 * asserts the named reason with the BMC's own words, the time from the fault to the hold (U1, at once)
 * and to the failure (U2, at power_unknown_timeout), and that the healthy nodes of the same session
 * complete:
 * - an ipmi_sim killed mid-reboot (its graceful power-off sent): bmc_unreachable, and no forceful
 *   power-off counted against it; explain shows it held, its power unknown;
 * - a wrong BMC password: bmc_auth_failed, never powered on;
 * - a Redfish BMC answering 500: bmc_error; one that never answers: bmc_timeout (the per-call timeout,
 *   4 s here); one answering after 2.5 s (within the timeout, beyond the status pass's 1 s wait): the
 *   node completes, never held.
 * The retry policy is short: power_unknown_timeout 10 s, so each failure is due 10-40 s after its
 * fault (60 s at the default); the same faults without this work ended in power_off_timeout after
 * 4 minutes or more, or never.
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1 (and needs ipmitool and ipmi_sim).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { haveTools } from '../helpers/tools.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { BMC_PASSWORD, BMC_USER, BmcNodes, type IpmiNode } from './bmc-nodes.ts';
import { freePort, gql as gqlAt, waitFor } from './stack.ts';

const ENABLED = process.env.BOOTORCH_FAULT_TESTS === '1' && haveTools('test/faults/bmc', ['ipmitool', 'ipmi_sim']);
/** Seconds a node's power may stay unknown before it fails (the option; 60 by default). */
const UNKNOWN_TIMEOUT = 10;

let db: TestDb;
let api: RoleProcess;
let worker: RoleProcess;
let base: string;
let admin: string;
let nodes: BmcNodes;
const sims: Array<{ world: SimWorld; server: SimServer }> = [];

const gql = (query: string, variables: Record<string, unknown> = {}) =>
  gqlAt(`${base}/graphql`, admin, query, variables).catch((e: Error) => {
    throw new Error(`${e.message}\n${logs()}`);
  });
const logs = () => `api:\n${api?.output().slice(-4000)}\nworker:\n${worker?.output().slice(-8000)}`;
const until = (cond: () => Promise<boolean>, what: string, timeoutMs: number) => waitFor(cond, what, timeoutMs, logs);
const row = async (id: string) => (await db.pool.query('select * from components where id = $1', [id])).rows[0];
const events = async (id: string) => (await db.pool.query('select * from component_events where component_id = $1 order by id', [id])).rows;
const seconds = (from: number, to: Date | number) => ((typeof to === 'number' ? to : to.getTime()) - from) / 1000;

/** A Redfish node of its own simulator: its BMC address is the simulator's ComputerSystem; its boot plays firmware. */
async function redfishNode(xname: string, mac: string): Promise<{ xname: string; mac: string; world: SimWorld; address: string }> {
  const world = new SimWorld({ nodes: 1, initial: { power: 'off' }, powerOnDelayMs: 200, powerOffDelayMs: 200, forceOffDelayMs: 50 });
  const server = await startSimServer(world);
  sims.push({ world, server });
  const [system] = world.ids();
  world.events.onEvent('boot', () => void nodes.firmware(mac, xname));
  return { xname, mac, world, address: `${server.url}/redfish/v1/Systems/${system}` };
}

async function register(
  group: string,
  ipmi: Array<{ n: IpmiNode; password?: string }>,
  redfish: Array<{ xname: string; mac: string; address: string }>,
) {
  await gql(`mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname } }`, {
    n: [
      ...ipmi.map(({ n, password }) => ({
        xname: n.xname,
        mac: n.mac,
        groups: [group],
        bmc: { driver: 'IPMI', address: n.bmcAddress, username: BMC_USER, password: password ?? BMC_PASSWORD },
      })),
      ...redfish.map((r) => ({
        xname: r.xname,
        mac: r.mac,
        groups: [group],
        bmc: { driver: 'REDFISH', address: r.address, username: 'root', password: 'calvin' },
      })),
    ],
  });
  await gql(`mutation($name: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $name, input: $i) { template { name } } }`, {
    name: group,
    i: {
      enableCfs: false,
      bootSets: [{ name: 'all', type: 's3', path: 'manifest.json', kernelParameters: 'console=ttyS0', nodeGroups: [group] }],
    },
  });
  const ids = [...ipmi.map(({ n }) => n.xname), ...redfish.map((r) => r.xname)];
  await until(
    async () => (await db.pool.query('select count(*)::int as n from components where id = any($1)', [ids])).rows[0].n === ids.length,
    `discovery of ${group}`,
    30_000,
  );
}

async function runSession(name: string, template: string, operation: 'BOOT' | 'REBOOT'): Promise<number> {
  const at = Date.now();
  await gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name } } }`, {
    i: { name, operation, templateName: template },
  });
  return at;
}

const sessionComplete = (name: string, timeoutMs: number) =>
  until(
    async () => (await db.pool.query('select status from sessions where name = $1', [name])).rows[0]?.status === 'complete',
    `session ${name} complete`,
    timeoutMs,
  );

/** The broken node's hold (U1) and failure (U2) events, and the healthy nodes' final rows. */
async function expectClassified(o: {
  fault: number;
  broken: string;
  reason: string;
  message: RegExp;
  healthy: string[];
}): Promise<{ heldAfter: number; failedAfter: number }> {
  const r = await row(o.broken);
  expect(r).toMatchObject({ status: 'failed', failure_reason: o.reason, enabled: false });
  expect(r.error).toMatch(new RegExp(`^Power unknown for \\d+ s \\(${o.reason}\\): `));
  expect(r.error).toMatch(o.message);
  const ev = await events(o.broken);
  const held = ev.find((e) => e.data?.rule === 'U1' && e.at.getTime() >= o.fault);
  const failed = ev.find((e) => e.data?.rule === 'U2');
  expect(held, 'the hold is on the timeline').toBeTruthy();
  expect(held).toMatchObject({ to_status: 'on_hold' });
  expect(failed).toMatchObject({ kind: 'failed', reason: o.reason });
  // Held, nothing acts on it: no power action after the hold.
  expect(ev.filter((e) => e.kind === 'action' && Number(e.id) > Number(held.id))).toEqual([]);
  const heldAfter = seconds(o.fault, held.at);
  const failedAfter = seconds(o.fault, failed.at);
  // Held at once: the pass that reads the failure (the BMC's calls run one at a time, each to a dead
  // BMC about 2.3 s of ipmitool's own retries, so a read may wait behind a power call already sent) ...
  expect(heldAfter).toBeLessThan(20);
  // ... and failed once its power stayed unknown for power_unknown_timeout, not before, not minutes later.
  expect(failedAfter - heldAfter).toBeGreaterThanOrEqual(UNKNOWN_TIMEOUT - 0.5);
  expect(failedAfter).toBeLessThan(UNKNOWN_TIMEOUT + 35);
  for (const id of o.healthy) expect(await row(id)).toMatchObject({ status: 'stable', enabled: false, failure_reason: '', error: '' });
  return { heldAfter, failedAfter };
}

describe.runIf(ENABLED)('broken BMCs: the node says why within the retry policy; the healthy ones finish', { timeout: 240_000 }, () => {
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
        power_unknown_timeout: UNKNOWN_TIMEOUT,
        cleanup_completed_session_ttl: '0',
      }),
    ]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'bmc-faults' })).token;
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
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    nodes = new BmcNodes(base);
    const env = {
      BOOTORCH_ADAPTERS: 'standalone',
      DATABASE_URL: db.url,
      BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
      BOOTORCH_BOOT_FILES: files,
      BOOTORCH_AUTH_MODE: 'tokens',
      PORT: String(port),
      // The per-call deadline (ipmitool gives up on a silent BMC after about 2 s within it) and the
      // status pass's wait for the BMCs: a BMC slower than 1 s is still being asked, not unknown.
      BOOTORCH_BMC_TIMEOUT: '4',
      BOOTORCH_BMC_PASS_WAIT: '1',
      BOOTORCH_BMC_CIRCUIT_MAX_OPEN: '5',
      LOG_LEVEL: 'info',
    };
    api = startRole('api', env);
    worker = startRole('worker', env);
    await Promise.all([api.waitFor(/api listening/), worker.waitFor(/worker running/)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await nodes?.stop();
    for (const s of sims) {
      await s.server.close();
      s.world.close();
    }
    await db?.drop();
  }, 60_000);

  it('an ipmi_sim killed mid-reboot: bmc_unreachable, no power action once held; the healthy nodes reboot', async () => {
    const victim = await nodes.add('x3000c0s20b0n0', 0x20);
    const healthy = await nodes.add('x3000c0s21b0n0', 0x21);
    const rf = await redfishNode('x3000c0s22b0n0', '52:54:00:00:0b:22');
    await nodes.ready();
    await register('mid-reboot', [{ n: victim }, { n: healthy }], [rf]);
    await runSession('a-boot', 'mid-reboot', 'BOOT');
    await sessionComplete('a-boot', 90_000);
    const ids = [victim.xname, healthy.xname, rf.xname];
    for (const id of ids) expect(await row(id)).toMatchObject({ status: 'stable', actual_kernel: 'vmlinuz' });

    await runSession('a-reboot', 'mid-reboot', 'REBOOT');
    await until(
      async () => (await row(victim.xname)).last_action === 'powering_off_gracefully',
      'graceful power-off of the victim sent',
      30_000,
    );
    await nodes.killBmc(victim);
    const fault = Date.now();

    // Explain, while it is held: its power unknown with the cause, rule U1, waiting on its power.
    await until(async () => (await row(victim.xname)).status === 'on_hold', 'victim held', 20_000);
    const ex = (
      await gql(
        `query($id: ID!) { explain(componentId: $id) { powerState waitingFor summary decision { rule } blockers { kind detail } } }`,
        {
          id: victim.xname,
        },
      )
    ).explain;
    expect(ex.powerState).toMatch(/^unknown \((bmc_unreachable|bmc_timeout)\): /);
    expect(ex.waitingFor).toBe('POWER_UNKNOWN');
    expect(ex.blockers.map((b: { kind: string }) => b.kind)).toContain('power_unknown');

    await sessionComplete('a-reboot', 90_000);
    const t = await expectClassified({
      fault,
      broken: victim.xname,
      reason: 'bmc_unreachable',
      message: /unreachable: x3000c0s20b0n0 \(BMC 127\.0\.0\.1:\d+\): .*Get Channel Authentication Capabilities/,
      healthy: [healthy.xname, rf.xname],
    });
    // The power-off retries the dead BMC used to cost (forceful every max_power_off_wait_time until the
    // retry policy ran out): none once it is held; only those already sent before the hold are counted.
    const ev = await events(victim.xname);
    const heldAt = Number(ev.find((e) => e.data?.rule === 'U1')!.id);
    const forcedBefore = ev.filter((e) => e.action === 'powering_off_forcefully' && Number(e.id) < heldAt).length;
    expect((await row(victim.xname)).power_off_forceful_attempts).toBe(forcedBefore);
    for (const id of [healthy.xname, rf.xname]) expect((await row(id)).actual_kernel).toBe('vmlinuz');
    console.info(`ipmi_sim killed: held after ${t.heldAfter.toFixed(1)} s, failed bmc_unreachable after ${t.failedAfter.toFixed(1)} s`);
  });

  it("a wrong BMC password: bmc_auth_failed with the BMC's words, never powered on; a dead BMC is not that", async () => {
    const wrong = await nodes.add('x3000c0s30b0n0', 0x30);
    const healthy = await nodes.add('x3000c0s31b0n0', 0x31);
    const rf = await redfishNode('x3000c0s32b0n0', '52:54:00:00:0b:32');
    await nodes.ready();
    await register('wrong-password', [{ n: wrong, password: 'not-the-password' }, { n: healthy }], [rf]);
    const fault = await runSession('b-boot', 'wrong-password', 'BOOT');
    await sessionComplete('b-boot', 90_000);
    const t = await expectClassified({
      fault,
      broken: wrong.xname,
      reason: 'bmc_auth_failed',
      message: /refused_login: x3000c0s30b0n0 .*RAKP 2 HMAC is invalid/,
      healthy: [healthy.xname, rf.xname],
    });
    expect((await events(wrong.xname)).filter((e) => e.kind === 'action' && e.action === 'powering_on')).toEqual([]);
    expect(await nodes.ipmitool(wrong, 'chassis', 'power', 'status')).toMatch(/Chassis Power is off/);
    console.info(`wrong password: held after ${t.heldAfter.toFixed(1)} s, failed bmc_auth_failed after ${t.failedAfter.toFixed(1)} s`);
  });

  it.each([
    ['answering 500', { failRate: 1 }, 'bmc_error', /bmc_error: x3000c0s4\db0n0 .*HTTP 500: simulated internal error/],
    ['never answering', { timeout: true }, 'bmc_timeout', /timeout: x3000c0s4\db0n0 .*no answer within 4 s/],
  ] as const)('a Redfish BMC %s: %s, the healthy IPMI node completes', async (what, fault, reason, message) => {
    const i = what === 'answering 500' ? 0 : 1;
    const broken = await redfishNode(`x3000c0s4${i}b0n0`, `52:54:00:00:0b:4${i}`);
    const healthy = await nodes.add(`x3000c0s5${i}b0n0`, 0x50 + i);
    await nodes.ready();
    await register(`redfish-${i}`, [{ n: healthy }], [broken]);
    broken.world.faults.setService('pcs', fault);
    const at = await runSession(`c-${i}`, `redfish-${i}`, 'BOOT');
    await sessionComplete(`c-${i}`, 90_000);
    const t = await expectClassified({ fault: at, broken: broken.xname, reason, message, healthy: [healthy.xname] });
    console.info(`Redfish ${what}: held after ${t.heldAfter.toFixed(1)} s, failed ${reason} after ${t.failedAfter.toFixed(1)} s`);
  });

  it('a slow Redfish BMC (2.5 s, within the 4 s per-call timeout): the node completes, never held; so does the healthy one', async () => {
    const slow = await redfishNode('x3000c0s60b0n0', '52:54:00:00:0b:60');
    const healthy = await nodes.add('x3000c0s61b0n0', 0x61);
    await nodes.ready();
    await register('slow', [{ n: healthy }], [slow]);
    slow.world.faults.setService('pcs', { slowMs: 2500 });
    const at = await runSession('c-slow', 'slow', 'BOOT');
    await sessionComplete('c-slow', 90_000);
    for (const id of [slow.xname, healthy.xname]) expect(await row(id)).toMatchObject({ status: 'stable', failure_reason: '', error: '' });
    expect((await events(slow.xname)).filter((e) => e.data?.rule === 'U1' || /^bmc_/.test(e.reason ?? ''))).toEqual([]);
    const done = (await events(slow.xname)).at(-1)!.at;
    console.info(`slow Redfish BMC: complete after ${seconds(at, done).toFixed(1)} s`);
    expect(seconds(at, done)).toBeLessThan(60);
  });
});
