/**
 * The standalone power adapter's BMC protection (bmc-guard.ts, power.ts) over real HTTP against a
 * farm of simulated Redfish BMCs, one listener per node: a power-status with one BMC that never
 * answers and one that refuses connections returns within its wait while the healthy nodes get their
 * state, and, once their circuits are open, at once (well under the per-call timeout) with each
 * one's last classified failure; at most one call in flight per BMC (systems of one chassis BMC
 * included) and at most the global limit over all, counted at the simulator; 429 and 503 are asked
 * again after their Retry-After.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { startBmcFarm, type BmcFarm } from '../../src/sim/bmc-farm.ts';
import { startSimServer, type Exchange, type SimServer } from '../../src/sim/server.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { StandalonePower } from '../../src/adapters/standalone/power.ts';
import { RedfishClient } from '../../src/adapters/standalone/redfish.ts';
import { IpmiTool } from '../../src/adapters/standalone/ipmi.ts';
import { BmcGuard } from '../../src/adapters/standalone/bmc-guard.ts';

const TIMEOUT_MS = 2000;
/** Nodes with a BMC of their own (the farm); the rest share one chassis BMC. */
const FARM = 21;
let db: TestDb;
let world: SimWorld;
let farm: BmcFarm;
let chassis: SimServer;
let ids: string[];
const key = randomBytes(32);
const exchanges: Array<Exchange & { at: number }> = [];
const drivers = { ipmi: new IpmiTool(), redfish: new RedfishClient({ timeoutMs: TIMEOUT_MS }) };

beforeAll(async () => {
  world = new SimWorld({ nodes: FARM + 3, initial: { power: 'on' } });
  ids = world.ids();
  farm = await startBmcFarm(world, { ids: ids.slice(0, FARM), onExchange: (x) => exchanges.push({ ...x, at: Date.now() }) });
  // Three systems behind one chassis BMC: the simulator's one port.
  chassis = await startSimServer(world);
  db = await freshDb();
  const url = (id: string, i: number) => (i < FARM ? farm.url(id) : `${chassis.url}/redfish/v1/Systems/${id}`);
  const r = await new NodeRegistry(key).register(
    db.db,
    ids.map((id, i) => ({
      xname: id,
      mac: `52:54:00:00:07:${String(i).padStart(2, '0')}`,
      bmc: { driver: 'redfish', address: url(id, i), username: 'root', password: 'calvin' },
    })),
  );
  expect(r.ok).toBe(true);
});
afterAll(async () => {
  await farm?.close();
  await chassis?.close();
  world?.close();
  await db?.drop();
});

/** No request at any BMC of the simulator (reads earlier tests left behind have ended). */
const quiet = () => waitFor(async () => world.counters.bmcInFlight.size === 0, 'no BMC request in flight', 3 * TIMEOUT_MS, undefined, 50);

const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const v = await fn();
  return [v, performance.now() - t0];
};

describe('a status pass with a dead and a refusing BMC', () => {
  it('returns within its wait, then at once once their circuits are open; the healthy nodes get their state', async () => {
    const [dead, refusing, ...healthy] = ids.slice(0, 9) as [string, string, ...string[]];
    world.faults.setNodes('bmcDead', [dead]);
    await farm.unplug(refusing);
    const guard = new BmcGuard({ failuresToOpen: 2, openMs: 60_000 });
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard, passWaitMs: 500 });
    try {
      const [first, firstMs] = await timed(() => power.powerStatus(ids.slice(0, 9)));
      expect(firstMs).toBeLessThan(TIMEOUT_MS);
      for (const id of healthy) expect(first.get(id)).toEqual({ state: 'on', error: '' });
      expect(first.get(dead)).toMatchObject({
        state: 'unknown',
        cause: 'bmc_timeout',
        error: expect.stringMatching(/still asking \(slow BMC\)/),
      });
      expect(first.get(refusing)).toMatchObject({
        state: 'unknown',
        cause: 'bmc_unreachable',
        error: expect.stringMatching(/ECONNREFUSED/),
      });

      // Passes go on (each joins the dead BMC's read in flight) until both circuits are open.
      await waitFor(
        async () => {
          await power.powerStatus([dead, refusing]);
          return guard.state(farm.url(dead)).state === 'open' && guard.state(farm.url(refusing)).state === 'open';
        },
        'both circuits open',
        4 * TIMEOUT_MS + 5000,
        () => JSON.stringify([guard.state(farm.url(dead)), guard.state(farm.url(refusing))]),
        50,
      );
      // A read a pass stopped waiting for is handed to the next pass once it settles: hand it over.
      await power.powerStatus([dead, refusing]);
      const [pass, passMs] = await timed(() => power.powerStatus(ids.slice(0, 9)));
      expect(passMs).toBeLessThan(TIMEOUT_MS / 5);
      for (const id of healthy) expect(pass.get(id)).toEqual({ state: 'on', error: '' });
      expect(pass.get(dead)).toMatchObject({
        state: 'unknown',
        cause: 'bmc_timeout',
        error: expect.stringMatching(/timeout: .*no answer within 2 s \(circuit open at BMC 127\.0\.0\.1:\d+ after 2 failures in a row/),
      });
      expect(pass.get(refusing)).toMatchObject({
        state: 'unknown',
        cause: 'bmc_unreachable',
        error: expect.stringMatching(/unreachable: .*ECONNREFUSED \(circuit open/),
      });
    } finally {
      world.faults.setNodes('bmcDead', []);
      await farm.plug(refusing);
      await power.idle();
    }
  });
});

describe('a slow BMC', () => {
  it('costs the first pass that meets it a short wait, and no pass after it', async () => {
    const nodes = ids.slice(0, 20);
    const slow = nodes[5]!;
    const patient = { ...drivers, redfish: new RedfishClient({ timeoutMs: 6000 }) };
    const power = new StandalonePower(db.db, { drivers: patient, secretKey: key, guard: new BmcGuard(), passWaitMs: 2000 });
    // Connections to the BMCs made first, so the timings below are the BMCs', not the handshakes'.
    await power.powerStatus(nodes);
    world.faults.setNodes('bmcSlow', [slow]);
    world.faults.setBmc({ slowMs: 3000 });
    const healthyOn = (st: Map<string, { state: string }>) => nodes.filter((id) => id !== slow).every((id) => st.get(id)?.state === 'on');
    try {
      // The 19 others answer; the straggler gets as long again as they took, not the whole 2 s wait.
      const [first, firstMs] = await timed(() => power.powerStatus(nodes));
      expect(healthyOn(first)).toBe(true);
      expect(first.get(slow)).toMatchObject({ state: 'unknown', pending: true, error: expect.stringMatching(/still asking \(slow BMC\)/) });
      expect(firstMs).toBeLessThan(1500);
      // Passes while its read is out do not wait for it; one of them takes its answer.
      let answered = false;
      const passMs: number[] = [];
      await waitFor(
        async () => {
          const [st, ms] = await timed(() => power.powerStatus(nodes));
          passMs.push(ms);
          expect(healthyOn(st)).toBe(true);
          answered = st.get(slow)?.state === 'on';
          return answered;
        },
        "the slow BMC's answer",
        10_000,
        () => passMs.join(', '),
        50,
      );
      // Known slow now: its next read is not waited for either.
      const [next, nextMs] = await timed(() => power.powerStatus(nodes));
      expect(next.get(slow)).toMatchObject({ state: 'unknown', pending: true });
      expect(Math.max(...passMs, nextMs)).toBeLessThan(1000);
    } finally {
      world.faults.setNodes('bmcSlow', []);
      await power.idle();
    }
  });
});

describe('BMCs are protected', () => {
  it('at most the global limit in flight over all BMCs, and one per BMC, counted at the simulator', async () => {
    const nodes = ids.slice(0, 9);
    await quiet();
    world.faults.setNodes('bmcSlow', nodes);
    world.faults.setBmc({ slowMs: 300 });
    world.counters.reset();
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard({ concurrency: 3 }), passWaitMs: 10_000 });
    try {
      // A read and an action per node, the action asked for once the reads are at the BMCs (a node
      // with an action already at its BMC is not read: see the next test).
      const reads = power.powerStatus(nodes);
      await waitFor(async () => world.counters.bmcInFlight.size > 0, 'reads at the BMCs', 5_000, undefined, 5);
      await power.transition('On', nodes);
      const a = await reads;
      await power.idle();
      for (const id of nodes) expect(a.get(id)!.state).toBe('on');
      expect(world.counters.bmcMax).toBe(3);
      expect(world.counters.bmcMaxPerNode).toBe(1);
    } finally {
      world.faults.setNodes('bmcSlow', []);
    }
  });

  it('a node whose power action is still at its BMC is not read: pending, then its state once the action settled', async () => {
    const id = ids[3]!;
    await quiet();
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard(), passWaitMs: 10_000 });
    try {
      // A read first: the client learns the system's Reset target, so the action is its POST alone.
      expect((await power.powerStatus([id])).get(id)).toEqual({ state: 'on', error: '' });
      // The action stays at the BMC 1.5 s (within the 2 s per-call timeout), far longer than the
      // power-status below takes to start.
      world.faults.setNodes('bmcSlow', [id]);
      world.faults.setBmc({ slowMs: 1500 });
      exchanges.length = 0;
      await power.transition('Force-Off', [id]);
      const during = await power.powerStatus([id]);
      expect(during.get(id)).toMatchObject({
        state: 'unknown',
        pending: true,
        error: expect.stringMatching(/a power action is still at its BMC/),
      });
      await power.idle();
      // No read was sent while the action was at the BMC: only the action's own requests.
      expect(exchanges.filter((x) => x.path === `/redfish/v1/Systems/${id}` && x.method === 'GET')).toEqual([]);
      world.faults.setNodes('bmcSlow', []);
      expect((await power.powerStatus([id])).get(id)).toEqual({ state: 'off', error: '' });
      await power.transition('On', [id]);
      await power.idle();
    } finally {
      world.faults.setNodes('bmcSlow', []);
    }
  });

  it('a read asked before a power action is not handed to a pass after it: that pass reads the node afresh', async () => {
    const id = ids[4]!;
    await quiet();
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard(), passWaitMs: 200 });
    try {
      expect((await power.powerStatus([id])).get(id)).toEqual({ state: 'on', error: '' });
      world.faults.setNodes('bmcSlow', [id]);
      world.faults.setBmc({ slowMs: 1000 });
      // The pass stops waiting; its read goes on, and the action queues behind it at the BMC.
      expect((await power.powerStatus([id])).get(id)).toMatchObject({ state: 'unknown', pending: true });
      await power.transition('Force-Off', [id]);
      await power.idle();
      world.faults.setNodes('bmcSlow', []);
      // The read answered "on" before the Force-Off: the first state a pass after the action gives is
      // what the node is now (the node is slow to this power: its fresh read may take a pass or two).
      let known: { state: string } | undefined;
      await waitFor(
        async () => {
          const p = (await power.powerStatus([id])).get(id)!;
          if (p.state !== 'unknown') known = p;
          return known !== undefined;
        },
        'a known power state',
        10_000,
        undefined,
        50,
      );
      expect(known).toEqual({ state: 'off', error: '' });
      await power.transition('On', [id]);
      await power.idle();
    } finally {
      world.faults.setNodes('bmcSlow', []);
    }
  });

  it('stillReading names a node while its read is out or its action unsettled, and not once it answered', async () => {
    const id = ids[5]!;
    const other = ids[6]!;
    await quiet();
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard(), passWaitMs: 200 });
    try {
      expect(power.stillReading([id, other])).toEqual(new Set());
      world.faults.setNodes('bmcSlow', [id]);
      world.faults.setBmc({ slowMs: 1000 });
      const pass = await power.powerStatus([id, other]);
      expect(pass.get(id)).toMatchObject({ state: 'unknown', pending: true });
      expect(pass.get(other)).toEqual({ state: 'on', error: '' });
      expect(power.stillReading([id, other])).toEqual(new Set([id]));
      // Answered (kept for the next pass): no longer being read.
      await waitFor(async () => power.stillReading([id]).size === 0, 'the slow read answered', 10_000, undefined, 50);
      expect((await power.powerStatus([id])).get(id)).toEqual({ state: 'on', error: '' });
      // A power action not yet settled at the BMC: its node's power is not known either.
      await power.transition('Force-Off', [id]);
      expect(power.stillReading([id, other])).toEqual(new Set([id]));
      await power.idle();
      expect(power.stillReading([id])).toEqual(new Set());
      world.faults.setNodes('bmcSlow', []);
      await power.transition('On', [id]);
      await power.idle();
    } finally {
      world.faults.setNodes('bmcSlow', []);
    }
  });

  it('the systems of one chassis BMC are asked one at a time', async () => {
    const inChassis = ids.slice(FARM);
    await quiet();
    world.faults.setNodes('bmcSlow', inChassis);
    world.faults.setBmc({ slowMs: 200 });
    world.counters.reset();
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard({ concurrency: 64 }), passWaitMs: 10_000 });
    try {
      const st = await power.powerStatus(inChassis);
      for (const id of inChassis) expect(st.get(id)).toEqual({ state: 'on', error: '' });
      expect(world.counters.bmcMax).toBe(1);
    } finally {
      world.faults.setNodes('bmcSlow', []);
    }
  });

  it.each([429, 503] as const)('a %i is asked again after its Retry-After, not before', async (status) => {
    const id = ids[2]!;
    world.faults.setNodes('bmcBusy', [id]);
    world.faults.setBmc({ busyStatus: status, retryAfter: 1, busyRate: 1 });
    exchanges.length = 0;
    const power = new StandalonePower(db.db, { drivers, secretKey: key, guard: new BmcGuard({ busyRetries: 2 }), passWaitMs: 10_000 });
    try {
      // Busy throughout: three answers a Retry-After apart, then the node's power is unknown with the BMC's message.
      const st = await power.powerStatus([id]);
      expect(st.get(id)).toMatchObject({
        state: 'unknown',
        cause: 'bmc_error',
        error: expect.stringMatching(new RegExp(`HTTP ${status}: The service is temporarily unavailable`)),
      });
      const busy = exchanges.filter((x) => x.path === `/redfish/v1/Systems/${id}`);
      expect(busy.map((x) => [x.status, x.responseHeaders['retry-after']])).toEqual([
        [status, '1'],
        [status, '1'],
        [status, '1'],
      ]);
      for (let i = 1; i < busy.length; i++) expect(busy[i]!.at - busy[i - 1]!.at).toBeGreaterThanOrEqual(950);
      // Busy once: the BMC recovers after its first busy answer; the second ask, a Retry-After later, gets the answer.
      exchanges.length = 0;
      const asking = power.powerStatus([id]);
      await waitFor(
        async () => exchanges.some((x) => x.path === `/redfish/v1/Systems/${id}` && x.status === status),
        'the first busy answer',
        5_000,
        undefined,
        20,
      );
      world.faults.setNodes('bmcBusy', []);
      const st2 = await asking;
      const asked = exchanges.filter((x) => x.path === `/redfish/v1/Systems/${id}`);
      expect(asked.map((x) => x.status)).toEqual([status, 200]);
      expect(st2.get(id)).toEqual({ state: 'on', error: '' });
      expect(asked[1]!.at - asked[0]!.at).toBeGreaterThanOrEqual(950);
    } finally {
      world.faults.setNodes('bmcBusy', []);
      world.faults.setBmc({ busyRate: 1 });
    }
  });
});
