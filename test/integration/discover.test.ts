/**
 * Discovery and re-inspection (adapters/standalone/discovery.ts) over real HTTP against the
 * simulator's BMCs, each at a loopback address of its own on one port (sim/standalone.ts's BMC host),
 * so targets are real ranges: a dry run stores nothing; a BMC that hangs, one that answers HTML, an
 * address where nobody listens and two BMCs reporting one MAC are each named while the others are
 * registered with their hardware and their sealed password; a wrong password is refused_login on
 * every BMC; a re-inspection that finds a changed NIC shows the MAC's change in its dry run and stores
 * it after; a range too large is a typed error before any BMC is asked.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { bmcAddress, simMac, startBmcHost, type BmcHost } from '../../src/sim/standalone.ts';
import { setSimBmcLogin, setSimHardware } from '../../src/sim/http/redfish-inventory.ts';
import { NodeDiscovery, type DiscoveryResult } from '../../src/adapters/standalone/discovery.ts';
import { open } from '../../src/adapters/standalone/secrets.ts';
import { listNodes } from '../../src/db/node-inventory.ts';
import type { Checked } from '../../src/domain/validation.ts';

const NODES = 12;
const key = randomBytes(32);
let db: TestDb;
let world: SimWorld;
let host: BmcHost;
let ids: string[];
let discovery: NodeDiscovery;

beforeAll(async () => {
  world = new SimWorld({ nodes: NODES, initial: { power: 'on' } });
  ids = world.ids();
  setSimBmcLogin(world, { username: 'root', password: 'calvin' });
  host = await startBmcHost(world, { delivered: 0, refused: 0 });
  db = await freshDb();
  discovery = new NodeDiscovery({ secretKey: key, timeoutMs: 1500 });
});
afterAll(async () => {
  await host?.close();
  world?.close();
  await db?.drop();
});

/** Every BMC of the world and one address past them, where nobody listens. */
const targets = () => [`${bmcAddress(0)}-${bmcAddress(NODES).split('.')[3]}`];
const request = (over: Record<string, unknown> = {}) => ({
  targets: targets(),
  scheme: 'http',
  port: host.port,
  username: 'root',
  password: 'calvin',
  ...over,
});
const value = (r: Checked<DiscoveryResult>): DiscoveryResult => {
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
};

describe('discovery', () => {
  it('a dry run plans every BMC as a new node, named by its system Id, and stores nothing', async () => {
    const r = value(await discovery.discover(db.db, request({ dryRun: true })));
    expect(r.asked).toBe(NODES + 1);
    expect(r.nodes.map((n) => [n.xname, n.action])).toEqual(ids.map((id) => [id, 'create']));
    const first = r.nodes[0]!;
    expect(first.action === 'create' && first.changes.find((c) => c.field === 'mac')).toEqual({ field: 'mac', from: '', to: simMac(0) });
    expect(first.system.hardware).toMatchObject({
      source: 'redfish',
      cpuCount: 2,
      macs: [simMac(0), expect.any(String)],
      biosVersion: '1.4.2',
    });
    expect(first.system.hardware.disks).toHaveLength(2);
    expect(first.system.hardware.bmcFirmwareVersion).toMatch(/^2\./);
    expect(r.failures.map((f) => [f.address, f.problem])).toEqual([[bmcAddress(NODES), 'unreachable']]);
    expect(await listNodes(db.db)).toEqual([]);
  });

  it('names a hanging, a garbage-answering and two same-MAC BMCs and registers the others', async () => {
    const [dead, garbage, dupA, dupB] = ids as [string, string, string, string];
    world.faults.setNodes('bmcDead', [dead]);
    setSimHardware(world, garbage, { garbage: true });
    setSimHardware(world, dupB, { macs: [simMac(2)] });
    try {
      const r = value(await discovery.discover(db.db, request({ groups: ['found'] })));
      const problems = Object.fromEntries(r.failures.map((f) => [f.address, f.problem]));
      expect(problems).toEqual({ [bmcAddress(0)]: 'timeout', [bmcAddress(1)]: 'unexpected_answer', [bmcAddress(NODES)]: 'unreachable' });
      expect(r.failures.find((f) => f.address === bmcAddress(1))!.message).toMatch(/not JSON/);
      const refused = r.nodes.filter((n) => n.action === 'refused');
      expect(refused.map((n) => n.xname)).toEqual([dupA, dupB]);
      for (const n of refused)
        expect(n.action === 'refused' && n.problem).toMatch(new RegExp(`MAC ${simMac(2)} is reported by another BMC`));
      const stored = await listNodes(db.db);
      expect(stored.map((n) => n.id)).toEqual(ids.slice(4));
      const n = stored[0]!;
      expect(n).toMatchObject({ mac: simMac(4), bmcDriver: 'redfish', bmcUsername: 'root', groups: ['found'], role: 'Compute' });
      expect(n.bmcAddress).toBe(`http://${bmcAddress(4)}:${host.port}/redfish/v1/Systems/${ids[4]}`);
      expect(open(key, n.id, n.bmcSecret)).toBe('calvin');
      expect(n.hardware?.memoryGiB).toBeGreaterThan(0);
      expect(n.inspectedAt).toBeInstanceOf(Date);
    } finally {
      world.faults.setNodes('bmcDead', []);
      setSimHardware(world, garbage, { garbage: false });
      setSimHardware(world, dupB, { macs: [simMac(3)] });
    }
  });

  it('a second discovery finds the stored nodes unchanged', async () => {
    const r = value(await discovery.discover(db.db, request({ dryRun: true })));
    const actions = Object.fromEntries(r.nodes.map((n) => [n.xname, n.action]));
    for (const id of ids.slice(4)) expect(actions[id]).toBe('unchanged');
    for (const id of ids.slice(0, 4)) expect(actions[id]).toBe('create');
  });

  it('a wrong password is refused_login at every BMC, naming it', async () => {
    const r = value(await discovery.discover(db.db, request({ password: 'wrong', dryRun: true, targets: [bmcAddress(5), bmcAddress(6)] })));
    expect(r.nodes).toEqual([]);
    expect(r.failures.map((f) => [f.address, f.problem])).toEqual([
      [bmcAddress(5), 'refused_login'],
      [bmcAddress(6), 'refused_login'],
    ]);
    expect(r.failures[0]!.message).toMatch(/HTTP 401/);
  });

  it('a range too large or a bad target is a typed error naming it, before any BMC is asked', async () => {
    const r = await discovery.discover(db.db, request({ targets: ['10.0.0.0/8', 'not an address', '10.0.0.9-10.0.0.1'] }));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.map((e) => e.field)).toEqual(['input.targets[0]', 'input.targets[1]', 'input.targets[2]']);
    expect(!r.ok && r.errors[0]!.message).toMatch(/16,777,214 addresses: one discovery asks at most 16,384/);
  });
});

describe('re-inspection', () => {
  it('shows a changed MAC in its dry run, stores it after', async () => {
    const id = ids[5]!;
    const newMac = '02:b0:07:ff:00:05';
    setSimHardware(world, id, { macs: [newMac, `02:b1:07:00:00:05`], memoryGiB: 768 });
    const dry = value(await discovery.inspect(db.db, [id], true));
    expect(dry.failures).toEqual([]);
    const [n] = dry.nodes;
    expect(n?.action).toBe('update');
    expect(n?.action === 'update' && n.changes.filter((c) => c.field === 'mac' || c.field === 'hardware.memoryGiB')).toEqual([
      { field: 'mac', from: simMac(5), to: newMac },
      { field: 'hardware.memoryGiB', from: '512', to: '768' },
    ]);
    expect((await listNodes(db.db, [id]))[0]!.mac).toBe(simMac(5));
    value(await discovery.inspect(db.db, [id], false));
    const [after] = await listNodes(db.db, [id]);
    expect(after).toMatchObject({ mac: newMac, bmcUsername: 'root', hardware: { memoryGiB: 768 } });
    expect(open(key, id, after!.bmcSecret)).toBe('calvin');
  });

  it('names a node that is not registered', async () => {
    const r = await discovery.inspect(db.db, [ids[5]!, 'x9999c0s0b0n0'], true);
    expect(!r.ok && r.errors).toEqual([{ field: 'xnames[1]', message: 'no node x9999c0s0b0n0 is registered' }]);
  });
});
