import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRig, type Rig } from './harness.ts';
import { contractTest } from './contracts.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ nodes: 24, faults: { nodes: { powerUndefined: ['x1000c0s1b0n0'] } } });
});
afterAll(() => rig.close());

describe('PCS client against the simulator, under the PCS contract', () => {
  it('starts transitions in chunks and answers 200 at once', async () => {
    rig.adapters.configure({ timeouts: { hsm: 5, pcs: 5, bss: 5, cfs: 5, ims: 5 }, maxBatchSize: 10 });
    const ids = rig.world.ids();
    const tids = await rig.adapters.power.transition('On', ids);
    expect(tids).toHaveLength(3);
    expect(rig.world.counters.callCount('pcs', 'POST /transitions')).toBe(3);
    const sent = JSON.parse(rig.exchanges.find((x) => x.path === '/transitions')!.requestBody);
    expect(sent).toEqual({ operation: 'on', taskDeadlineMinutes: 1, location: ids.slice(0, 10).map((xname) => ({ xname })) });
    const first = rig.exchanges.find((x) => x.path === '/transitions')!;
    expect(first.status).toBe(200);
    expect(first.responseHeaders.location).toBe(`../transitions/${tids[0]}`);
    await rig.world.waitUntil(() => ids.every((id) => rig.world.node(id)!.power === 'on'), 3000);
    expect(ids.every((id) => rig.world.counters.transitionCount('On', id) === 1)).toBe(true);
  });

  it('reads power status in chunks; unknown and unreachable nodes are unknown power, with the cause', async () => {
    const ids = rig.world.ids();
    const before = rig.world.counters.callCount('pcs', 'POST /power-status');
    const st = await rig.adapters.power.powerStatus([...ids, 'x9999c0s0b0n0']);
    expect(rig.world.counters.callCount('pcs', 'POST /power-status') - before).toBe(3);
    expect(st.get(ids[0]!)).toEqual({ state: 'on', error: '' });
    // Neither is a state: PCS's undefined (it cannot reach the BMC) and its error entry are unknown, with the cause.
    expect(st.get('x1000c0s1b0n0')).toEqual({
      state: 'unknown',
      cause: 'bmc_unreachable',
      error: 'PCS reports powerState undefined, managementState unavailable for x1000c0s1b0n0: PCS cannot reach its BMC',
    });
    expect(st.get('x9999c0s0b0n0')).toEqual({
      state: 'unknown',
      cause: 'not_in_inventory',
      error: 'PCS: Component not found in component map.',
    });
    expect((await rig.adapters.power.powerStatus([])).size).toBe(0);
  });

  it('Soft-Off and Force-Off go out in the contract form and take effect', async () => {
    const [a, b] = rig.world.ids() as [string, string];
    rig.world.faults.setNodes('ignoresSoftOff', [a]);
    const ignored = rig.world.waitFor('power-failed', (e) => e.id === a, 3000);
    await rig.adapters.power.transition('Soft-Off', [a, b]);
    await rig.world.waitUntil(() => rig.world.node(b)!.power === 'off', 3000);
    await ignored;
    expect(rig.world.node(a)!.power).toBe('on');
    await rig.adapters.power.transition('Force-Off', [a]);
    await rig.world.waitUntil(() => rig.world.node(a)!.power === 'off', 3000);
    expect(JSON.parse(rig.exchanges.filter((x) => x.path === '/transitions').at(-1)!.requestBody).operation).toBe('force-off');
  });

  it('serves transition records, quirks and errors', async () => {
    const [a] = rig.world.ids() as [string];
    const tid = (await rig.adapters.power.transition('On', [a]))[0]!;
    await rig.world.waitUntil(() => rig.world.power.transitions.get(tid)!.transitionStatus === 'completed', 3000);
    const got = await rig.adapters.power.getTransition!(tid);
    expect(got).toEqual({ id: tid, operation: 'On', status: 'completed', tasks: [{ xname: a, status: 'succeeded', error: '' }] });
    expect(await rig.adapters.power.getTransition!('3fa85f64-5717-4562-b3fc-2c963f66afa6')).toBeUndefined();
    const t = await (await rig.raw(`/power-control/v1/transitions/${tid}`)).json();
    expect(t).toMatchObject({ transitionID: tid, operation: 'On', transitionStatus: 'completed', taskCounts: { total: 1, succeeded: 1 } });
    expect(t.tasks[0]).toMatchObject({ xname: a, taskStatus: 'succeeded' });
    expect((await rig.raw('/transitions')).status).toBe(200);
    expect((await rig.raw('/transitions/not-a-uuid')).status).toBe(400);
    expect((await rig.raw('/transitions/3fa85f64-5717-4562-b3fc-2c963f66afa6')).status).toBe(404);
    const bad = await rig.raw('/transitions', { method: 'POST', body: { operation: 'explode', location: [{ xname: a }] } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).detail).toBe('invalid Operation type explode');
    const invalid = await rig.raw('/power-status', { method: 'POST', body: { xname: ['not-an-xname'] } });
    expect(invalid.status).toBe(400);
    const get = await (await rig.raw(`/power-status?xname=${a}&powerStateFilter=on`)).json();
    expect(get.status).toEqual([expect.objectContaining({ xname: a, powerState: 'on', managementState: 'available' })]);
  });

  contractTest('every exchange satisfied the PCS contract', async () => {
    expect(await rig.violations()).toEqual([]);
  });
});
