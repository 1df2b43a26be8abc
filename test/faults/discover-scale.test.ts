/**
 * Discovery at site scale with BMCs failing among them, not timed: 10,000 simulated BMCs (each at its
 * own loopback address on one port, sim/standalone.ts's BMC host) discovered in one request over real
 * HTTP while 25 BMCs hang and 25 drop every connection: those 50 are named failures (timeout,
 * unreachable), every other node is stored with its hardware and sealed password; a second discovery
 * finds them unchanged; the hardware filter picks the nodes the simulator gave 1,024 GiB. Behind
 * BOOTORCH_FAULT_TESTS=1 (minutes on a 2-core machine); DISCOVERY_SCALE_NODES changes the count.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { bmcAddress, startBmcHost, type BmcHost } from '../../src/sim/standalone.ts';
import { setSimBmcLogin } from '../../src/sim/http/redfish-inventory.ts';
import { NodeDiscovery } from '../../src/adapters/standalone/discovery.ts';
import { rowsLimitInventory } from '../../src/adapters/standalone/inventory.ts';
import { listNodes } from '../../src/db/node-inventory.ts';
import { applyLimit } from '../../src/domain/limit.ts';

const ENABLED = process.env.BOOTORCH_FAULT_TESTS === '1';
const NODES = Number(process.env.DISCOVERY_SCALE_NODES ?? 10_000);
const key = randomBytes(32);
let db: TestDb;
let world: SimWorld;
let host: BmcHost;

describe.skipIf(!ENABLED)(`discovery of ${NODES} simulated BMCs`, { timeout: 1_200_000 }, () => {
  beforeAll(async () => {
    world = new SimWorld({ nodes: NODES, initial: { power: 'on' } });
    setSimBmcLogin(world, { username: 'root', password: 'calvin' });
    host = await startBmcHost(world, { delivered: 0, refused: 0 });
    db = await freshDb();
  });
  afterAll(async () => {
    await host?.close();
    world?.close();
    await db?.drop();
  });

  it('names the failing BMCs, registers every other node with its hardware, then finds them unchanged', async () => {
    const ids = world.ids();
    const step = Math.floor(NODES / 50);
    const dead = ids.filter((_, i) => i % step === 0).slice(0, 25);
    const refusing = ids.filter((_, i) => i % step === 1).slice(0, 25);
    world.faults.setNodes('bmcDead', dead);
    world.faults.setNodes('bmcRefuses', refusing);
    const failing = new Set([...dead, ...refusing]);
    const discovery = new NodeDiscovery({ secretKey: key, timeoutMs: 10_000 });
    const request = {
      targets: [`${bmcAddress(0)}-${bmcAddress(NODES - 1)}`],
      scheme: 'http',
      port: host.port,
      username: 'root',
      password: 'calvin',
    };
    const t0 = performance.now();
    const first = await discovery.discover(db.db, request);
    const seconds = (performance.now() - t0) / 1000;
    if (!first.ok) throw new Error(JSON.stringify(first.errors));
    const at = new Map(ids.map((id, i) => [bmcAddress(i), id]));
    const failed = first.value.failures.filter((f) => at.has(f.address));
    expect(failed.filter((f) => f.problem === 'timeout').map((f) => at.get(f.address))).toEqual(dead);
    expect(failed.filter((f) => f.problem === 'unreachable').map((f) => at.get(f.address))).toEqual(refusing);
    expect(failed).toHaveLength(50);
    // Addresses between the BMCs' blocks (.0, .255) are nobody's: asked, and unreachable.
    expect(first.value.failures.filter((f) => !at.has(f.address)).every((f) => f.problem === 'unreachable')).toBe(true);
    expect(first.value.nodes.filter((n) => n.action === 'create')).toHaveLength(NODES - 50);
    console.log(`discovered ${NODES} BMCs (${first.value.asked} addresses asked, 50 failing) in ${seconds.toFixed(1)} s`);
    const rows = await listNodes(db.db);
    expect(rows.map((r) => r.id).sort()).toEqual(ids.filter((id) => !failing.has(id)).sort());
    expect(rows.every((r) => r.hardware?.macs.length === 2 && r.inspectedAt)).toBe(true);
    const big = applyLimit(new Set(rows.map((r) => r.id)), 'memoryGiB>=1024', rowsLimitInventory(rows));
    const nids = new Map(world.ids().map((id) => [id, world.node(id)!]));
    expect([...big].sort()).toEqual(
      rows
        .filter((r) => nids.get(r.id)!.role === 'Compute' && nids.get(r.id)!.nid % 8 === 0)
        .map((r) => r.id)
        .sort(),
    );
    const second = await discovery.discover(db.db, { ...request, dryRun: true });
    expect(second.ok && second.value.nodes.every((n) => n.action === 'unchanged')).toBe(true);
  });
});
