/**
 * The standalone power adapter over Redfish against the simulator's Redfish face, over real HTTP:
 * reads, the PXE boot override before power-on, the three resets and their effect on the simulated
 * nodes, the graceful -> forceful escalation on a node that ignores GracefulShutdown, and each failure
 * (service down, timeout, missing system, refused login, no PowerState) as a classified error entry
 * or failed task, never a thrown call.
 */
import { randomBytes } from 'node:crypto';
import { loopbackCert, openssl } from '../helpers/tls.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { startSimServer, type Exchange, type SimServer } from '../../src/sim/server.ts';
import { redfishBootOverride } from '../../src/sim/http/redfish.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { StandalonePower } from '../../src/adapters/standalone/power.ts';
import { RedfishClient } from '../../src/adapters/standalone/redfish.ts';
import { IpmiTool } from '../../src/adapters/standalone/ipmi.ts';

let db: TestDb;
let world: SimWorld;
let sim: SimServer;
let power: StandalonePower;
const exchanges: Exchange[] = [];
const key = randomBytes(32);
let ids: string[];

beforeAll(async () => {
  world = new SimWorld({ nodes: 6, initial: { power: 'off' }, powerOnDelayMs: 50, powerOffDelayMs: 50, forceOffDelayMs: 20 });
  sim = await startSimServer(world, { onExchange: (x) => exchanges.push(x) });
  db = await freshDb();
  ids = world.ids().slice(0, 5);
  const registry = new NodeRegistry(key);
  const drafts = ids.map((id, i) => ({
    xname: id,
    mac: `52:54:00:00:02:0${i}`,
    bmc: { driver: 'redfish', address: `${sim.url}/redfish/v1/Systems/${id}`, username: 'root', password: i === 4 ? undefined : 'calvin' },
  }));
  drafts.push({
    xname: 'x9000c0s0b0n0',
    mac: '52:54:00:00:02:09',
    bmc: { driver: 'redfish', address: `${sim.url}/redfish/v1/Systems/x9000c0s0b0n0`, username: 'root', password: 'calvin' },
  });
  const r = await registry.register(db.db, drafts);
  expect(r.ok).toBe(true);
  power = new StandalonePower(db.db, {
    drivers: { ipmi: new IpmiTool(), redfish: new RedfishClient({ timeoutMs: 1000 }) },
    secretKey: key,
  });
});
afterAll(async () => {
  await power?.idle();
  await sim?.close();
  world?.close();
  await db?.drop();
});

const failed = async (tid: string) => {
  await power.idle();
  return (await power.getTransition(tid))!.tasks;
};

describe('Redfish power against the simulator', () => {
  it('reads PowerState per node; a missing system and a refused login are error entries, not a failed call', async () => {
    const st = await power.powerStatus([...ids, 'x9000c0s0b0n0', 'x9999c0s0b0n0']);
    for (const id of ids.slice(0, 4)) expect(st.get(id)).toEqual({ state: 'off', error: '' });
    expect(st.get(ids[4]!)).toMatchObject({ state: 'unknown', cause: 'bmc_auth_failed' });
    expect(st.get(ids[4]!)!.error).toMatch(/refused_login: .*HTTP 401: There is no valid session/);
    expect(st.get('x9000c0s0b0n0')).toMatchObject({ state: 'unknown', cause: 'bmc_error' });
    expect(st.get('x9000c0s0b0n0')!.error).toMatch(/unexpected_answer: x9000c0s0b0n0 .*HTTP 404: The resource at the URI/);
    expect(st.has('x9999c0s0b0n0')).toBe(false);
    const get = exchanges.find((x) => x.method === 'GET' && x.path === `/redfish/v1/Systems/${ids[0]}`)!;
    expect(get.requestHeaders.authorization).toBe(`Basic ${Buffer.from('root:calvin').toString('base64')}`);
  });

  it('On sets a one-time PXE boot, then resets On; the nodes come up', async () => {
    const [a, b] = ids as [string, string];
    const [tid] = await power.transition('On', [a, b]);
    expect((await failed(tid!)).map((t) => t.status)).toEqual(['succeeded', 'succeeded']);
    expect(redfishBootOverride(world, a)).toEqual({ BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' });
    const patch = exchanges.findIndex((x) => x.method === 'PATCH' && x.path === `/redfish/v1/Systems/${a}`);
    const reset = exchanges.findIndex((x) => x.method === 'POST' && x.path === `/redfish/v1/Systems/${a}/Actions/ComputerSystem.Reset`);
    expect(patch).toBeGreaterThanOrEqual(0);
    expect(reset).toBeGreaterThan(patch);
    expect(JSON.parse(exchanges[reset]!.requestBody)).toEqual({ ResetType: 'On' });
    await world.waitUntil(() => world.node(a)!.power === 'on' && world.node(b)!.power === 'on', 3000);
    expect((await power.powerStatus([a])).get(a)).toEqual({ state: 'on', error: '' });
  });

  it('GracefulShutdown is ignored by a node that ignores soft-off; ForceOff takes it down', async () => {
    const [a, b] = ids as [string, string];
    world.faults.setNodes('ignoresSoftOff', [a]);
    await failed((await power.transition('Soft-Off', [a, b]))[0]!);
    await world.waitUntil(() => world.node(b)!.power === 'off', 3000);
    expect(world.node(a)!.power).toBe('on');
    const sent = exchanges.filter((x) => x.path.endsWith('ComputerSystem.Reset')).map((x) => JSON.parse(x.requestBody).ResetType);
    expect(sent).toContain('GracefulShutdown');
    await failed((await power.transition('Force-Off', [a]))[0]!);
    await world.waitUntil(() => world.node(a)!.power === 'off', 3000);
    expect(world.counters.transitionCount('Force-Off', a)).toBe(1);
    world.faults.setNodes('ignoresSoftOff', []);
  });

  it('a BMC without PowerState (unreachable from its own controller) is an unexpected answer', async () => {
    const c = ids[2]!;
    world.faults.setNodes('powerUndefined', [c]);
    expect((await power.powerStatus([c])).get(c)!.error).toMatch(/unexpected_answer: .*no PowerState/);
    world.faults.setNodes('powerUndefined', []);
  });

  it('service down, failing and hung BMCs become classified, transient task errors', async () => {
    const c = ids[3]!;
    world.faults.setService('pcs', { down: true });
    const [tid] = await power.transition('On', [c]);
    const [task] = await failed(tid!);
    expect(task).toMatchObject({ xname: c, status: 'failed', error: expect.stringMatching(/bmc_error: .*HTTP 503/) });
    world.faults.setService('pcs', { down: undefined, timeout: true });
    expect((await power.powerStatus([c])).get(c)).toMatchObject({
      state: 'unknown',
      cause: 'bmc_timeout',
      error: expect.stringMatching(/timeout: .*no answer within 1 s/),
    });
    world.faults.setService('pcs', { timeout: undefined });
    expect((await power.powerStatus([c])).get(c)).toEqual({ state: 'off', error: '' });
    expect(world.node(c)!.power).toBe('off');
  });
});

describe.skipIf(!openssl)('Redfish over HTTPS with a self-signed BMC certificate', () => {
  it('gets through with BOOTORCH_BMC_CA_FILE and is refused as unreachable without it', async () => {
    const c = loopbackCert('bootorch-bmc-tls-');
    const ca = c.certFile;
    const tls = await startSimServer(world, { tls: { key: c.key, cert: c.cert } });
    try {
      const id = ids[0]!;
      const target = { id, address: `${tls.url}/redfish/v1/Systems/${id}`, username: 'root', password: 'calvin' };
      expect(await new RedfishClient({ caFile: ca }).powerState(target)).toMatch(/^(on|off)$/);
      await expect(new RedfishClient().powerState(target)).rejects.toThrow(/unreachable: .*(SELF_SIGNED|self.signed)/i);
    } finally {
      await tls.close();
    }
  });
});
