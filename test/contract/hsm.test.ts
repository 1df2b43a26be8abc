import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRig, type Rig } from './harness.ts';
import { contractTest } from './contracts.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ nodes: 40, river: true, locked: ['x1000c0s0b0n1'], disabled: ['x1000c0s0b1n0'] });
});
afterAll(() => rig.close());

describe('HSM client against the simulator, under the HSM contract', () => {
  it('lists nodes with roles, arch and NIDs', async () => {
    const nodes = await rig.adapters.inventory.listNodes();
    expect(nodes).toHaveLength(51);
    expect(nodes.find((n) => n.id === 'x3000c0s10b0n0')).toMatchObject({ role: 'Application', subRole: 'UAN', arch: 'X86' });
    expect(rig.exchanges.at(-1)).toMatchObject({ method: 'GET', path: '/hsm/v2/State/Components', query: 'type=Node' });
  });

  it('queries by ids in chunks of max_component_batch_size, enabled only when asked', async () => {
    rig.adapters.configure({ timeouts: { hsm: 5, pcs: 5, bss: 5, cfs: 5, ims: 5 }, maxBatchSize: 10 });
    const ids = rig.world.ids().slice(0, 25);
    const before = rig.world.counters.callCount('hsm', 'POST /hsm/v2/State/Components/Query');
    const all = await rig.adapters.inventory.queryNodes([...ids, 'x9999c0s0b0n0']);
    expect(all.map((n) => n.id)).toEqual(ids);
    expect(rig.world.counters.callCount('hsm', 'POST /hsm/v2/State/Components/Query') - before).toBe(3);
    const enabled = await rig.adapters.inventory.queryNodes(ids, { enabledOnly: true });
    expect(enabled.map((n) => n.id)).not.toContain('x1000c0s0b1n0');
    expect(JSON.parse(rig.exchanges.at(-1)!.requestBody)).toMatchObject({ enabled: ['True'] });
    expect(await rig.adapters.inventory.queryNodes([])).toEqual([]);
    rig.adapters.configure({ timeouts: { hsm: 5, pcs: 5, bss: 5, cfs: 5, ims: 5 }, maxBatchSize: 2800 });
  });

  it('reads groups, partitions and locked nodes', async () => {
    const groups = await rig.adapters.inventory.groups();
    expect(groups.map((g) => g.label)).toEqual(expect.arrayContaining(['cab-x1000', 'cab-x3000', 'blade-x86', 'compute-a', 'compute-b']));
    expect(await rig.adapters.inventory.partitions()).toEqual([{ label: 'p1', members: rig.world.partitions.get('p1') }]);
    expect(await rig.adapters.inventory.lockedNodes()).toEqual(['x1000c0s0b0n1']);
  });

  it('keeps HSM quirks: 400 Missing IDs, 500 on bad JSON, normalised ids, filters', async () => {
    const empty = await rig.raw('/hsm/v2/State/Components/Query', { method: 'POST', body: { ComponentIDs: [] } });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ detail: 'Missing IDs', status: 400 });
    const bad = await rig.raw('/hsm/v2/State/Components/Query', { method: 'POST', body: '{"ComponentIDs": [' });
    expect(bad.status).toBe(500);
    const norm = await rig.raw('/hsm/v2/State/Components/Query', { method: 'POST', body: { ComponentIDs: ['X1000C0S01B0N0'] } });
    expect((await norm.json()).Components.map((c: { ID: string }) => c.ID)).toEqual(['x1000c0s1b0n0']);
    const uans = await (await rig.raw('/hsm/v2/State/Components?role=Application&subrole=UAN')).json();
    expect(uans.Components).toHaveLength(2);
    const p1 = await (await rig.raw('/hsm/v2/State/Components?partition=p1&enabled=false')).json();
    expect(p1.Components.map((c: { ID: string }) => c.ID)).toEqual(['x1000c0s0b1n0']);
    const gw = await rig.raw('/apis/smd/hsm/v2/groups/compute-a');
    expect((await gw.json()).members.ids).toHaveLength(20);
  });

  contractTest('every exchange satisfied the HSM contract', async () => {
    expect(await rig.violations()).toEqual([]);
  });
});
