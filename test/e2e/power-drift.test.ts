/**
 * Power drift: nodes a session booted are done (disabled, stable); one is switched off by hand. The
 * power-drift operator's sweep reads it off: a `drift` event, the metric, the mark in GraphQL
 * (Component.powerDrift), and nothing powered; a sweep again keeps the one mark and event; switched
 * back on by hand, the mark goes with an event saying the drift ended. A shut-down node switched on
 * by hand drifts the other way. And the sweep's slices: 10,000 nodes at 20 per second are read in
 * slices of 200, the whole fleet in 500 s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';
import { local, value } from '../helpers/metrics.ts';
import { DRIFT_TICK_SECONDS, driftSlice } from '../../src/operators/power-drift.ts';
import { powerDriftNodes } from '../../src/observability/metrics.ts';

let c: Cluster;
let api: ClusterApi;

beforeAll(async () => {
  c = await startCluster({ world: { nodes: 4, initial: { power: 'off' } }, options: { power_drift_rate: 1000 } });
  api = await startClusterApi(c);
});
afterAll(async () => {
  await api?.api.close();
  await c?.close();
});

const drifts = async (id: string) => (await c.events({ component: id })).filter((e) => e.kind === 'drift');
const found = async () => value(await local(), 'bootorch_power_drift_found_total');
const mark = async (id: string) =>
  (await api.gql(`query($id: ID!) { component(id: $id) { powerDrift { expected actual since } } }`, { id })).component.powerDrift;

/** One sweep now (the operator's tick); resolves when it has ended (its last step sets the gauge). */
async function sweep() {
  powerDriftNodes.set(-1);
  await c.engine.scheduler.kick(c.db.db, ['power-drift']);
  await c.waitFor(async () => value(await local(), 'bootorch_power_drift_nodes') >= 0, 'a power-drift tick');
}

describe('power drift', { timeout: 180_000 }, () => {
  it('is seen, marked, counted and left alone; cleared when the power is back', async () => {
    const [a, b] = c.world.ids() as [string, string];
    await c.template('t');
    await c.session('boot', { template: 't', operation: 'boot' });
    await c.waitForSession('boot', 90_000);
    const before = await found();
    const ons = c.world.counters.transitionCount('On', a);

    // Switched off behind bootorch's back (no session, no API).
    c.world.transition('Force-Off', [a]);
    await c.world.waitUntil(() => c.world.node(a)!.power === 'off', 5000);
    await sweep();
    expect(await drifts(a)).toHaveLength(1);
    const [ev] = await drifts(a);
    expect(ev).toMatchObject({ actor: 'operator:power-drift', data: { expected: 'on', actual: 'off' } });
    expect(ev.error).toMatch(/power off, but bootorch left it on/);
    const m = await mark(a);
    expect(m).toMatchObject({ expected: 'on', actual: 'off' });
    expect(await mark(b)).toBeNull();
    expect((await found()) - before).toBe(1);
    // Nothing powered: no power-on asked for, the node still off, its component done as it was.
    expect(c.world.counters.transitionCount('On', a)).toBe(ons);
    expect(c.world.node(a)!.power).toBe('off');
    const [row] = await c.components([a]);
    expect(row).toMatchObject({ enabled: false, phase: '', status: 'stable' });

    // Another sweep: the same drift, one mark (same since) and one event.
    await sweep();
    expect(await drifts(a)).toHaveLength(1);
    expect(value(await local(), 'bootorch_power_drift_nodes')).toBe(1);
    expect((await mark(a)).since).toBe(m.since);

    // Back on by hand: the mark goes, with an event saying so.
    c.world.transition('On', [a]);
    await c.world.waitUntil(() => c.world.node(a)!.power === 'on', 5000);
    await sweep();
    expect(await drifts(a)).toHaveLength(2);
    expect((await drifts(a))[1].data).toMatchObject({ expected: 'on', actual: 'on', ended: true });
    expect(await mark(a)).toBeNull();
  });

  it('a node bootorch shut down, switched on by hand, drifts the other way', async () => {
    const [, , d] = c.world.ids() as [string, string, string];
    await c.template('t2', { nodes: [d] });
    await c.session('off', { template: 't2', operation: 'shutdown' });
    await c.waitForSession('off', 90_000);
    expect(c.world.node(d)!.power).toBe('off');
    c.world.transition('On', [d]);
    await c.world.waitUntil(() => c.world.node(d)!.power === 'on', 5000);
    await sweep();
    expect(await drifts(d)).toHaveLength(1);
    expect(await mark(d)).toMatchObject({ expected: 'off', actual: 'on' });
  });

  it('sweeps in slices: 10,000 nodes at 20 per second, 200 a tick, every node once in 500 s', () => {
    const slices = new Set<number>();
    for (let t = 0; t < 50; t++) {
      const s = driftSlice(10_000, 20, t * DRIFT_TICK_SECONDS * 1000);
      expect(s.slices).toBe(50);
      slices.add(s.slice);
    }
    expect(slices.size).toBe(50);
  });
});
