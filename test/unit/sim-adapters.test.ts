import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import { ServiceError } from '../../src/adapters/errors.ts';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';

const worlds: SimWorld[] = [];
const make = (o: WorldOptions = {}) => {
  const w = new SimWorld({ nodes: 16, ...o });
  worlds.push(w);
  return { w, a: createSimAdapters(w) };
};
afterEach(() => worlds.splice(0).forEach((w) => w.close()));

describe('sim adapters', () => {
  it('inventory: nodes, normalised queries, enabled filter, groups, partitions, locks', async () => {
    const { w, a } = make({ river: true, locked: ['x1000c0s0b0n1'], disabled: ['x1000c0s0b1n0'] });
    const nodes = await a.inventory.listNodes();
    expect(nodes).toHaveLength(27);
    expect(nodes[0]).toEqual({ id: 'x1000c0s0b0n0', role: 'Compute', subRole: '', arch: 'X86', enabled: true, nid: 1 });
    const q = await a.inventory.queryNodes(['X1000C0S0B0N0', 'x1000c0s0b1n0', 'x9999c0s0b0n0']);
    expect(q.map((n) => n.id)).toEqual(['x1000c0s0b0n0', 'x1000c0s0b1n0']);
    expect(await a.inventory.queryNodes(['x1000c0s0b1n0'], { enabledOnly: true })).toEqual([]);
    expect(await a.inventory.queryNodes([])).toEqual([]);
    expect((await a.inventory.groups()).find((g) => g.label === 'compute-a')!.members).toHaveLength(8);
    expect((await a.inventory.partitions())[0]).toMatchObject({ label: 'p1' });
    expect(await a.inventory.lockedNodes()).toEqual(['x1000c0s0b0n1']);
    expect(w.counters.callCount('hsm', 'POST /hsm/v2/State/Components/Query')).toBe(2);
  });

  it('power: one PCS call per chunk of max_component_batch_size', async () => {
    const { w, a } = make();
    a.configure({ timeouts: { hsm: 20, pcs: 20, bss: 20, cfs: 20, ims: 20 }, maxBatchSize: 5 });
    const ids = w.ids();
    const tids = await a.power.transition('On', ids);
    expect(tids).toHaveLength(4);
    expect(w.counters.callCount('pcs', 'POST /transitions')).toBe(4);
    expect(await a.power.transition('On', [])).toEqual([]);
    await w.waitUntil(() => ids.every((id) => w.node(id)!.power === 'on'), 2000);
    const st = await a.power.powerStatus([...ids, 'x9999c0s0b0n0']);
    expect(w.counters.callCount('pcs', 'POST /power-status')).toBe(4);
    expect(st.get(ids[0]!)).toEqual({ state: 'on', error: '' });
    expect(st.get('x9999c0s0b0n0')).toEqual({
      state: 'unknown',
      cause: 'not_in_inventory',
      error: 'PCS: Component not found in component map.',
    });
    expect((await a.power.powerStatus([])).size).toBe(0);
  });

  it('power status lags the real power by powerStatusLagMs, as PCS samples BMCs', async () => {
    const { w, a } = make({ powerStatusLagMs: 20 });
    const id = w.ids()[0]!;
    await a.power.transition('On', [id]);
    await w.waitFor('power', (p) => p.id === id, 2000);
    const sawOff = Date.now();
    expect((await a.power.powerStatus([id])).get(id)!.state).toBe('off');
    // Poll until PCS shows it on (or the deadline passes): the lag is what is measured.
    const deadline = Date.now() + 2000;
    while ((await a.power.powerStatus([id])).get(id)!.state !== 'on' && Date.now() < deadline) await w.timers.sleep(2); // until deadline
    expect((await a.power.powerStatus([id])).get(id)!.state).toBe('on');
    expect(Date.now() - sawOff).toBeGreaterThanOrEqual(10);
  });

  it('boot parameters: a new token per PUT, entries per host', async () => {
    const { a } = make();
    const p = { hosts: ['x1000c0s0b0n0', 'x1000c0s0b0n1'], kernel: 'k', initrd: 'i', params: 'p' };
    const t1 = await a.bootParams.setBootParameters(p);
    const t2 = await a.bootParams.setBootParameters(p);
    expect(t1.token).not.toBe(t2.token);
    expect(await a.bootParams.getBootParameters(['x1000c0s0b0n1', 'x9999c0s0b0n0'])).toEqual([
      { hosts: ['x1000c0s0b0n1'], kernel: 'k', initrd: 'i', params: 'p' },
    ]);
  });

  it('config: GET in batches of 200 following next, PATCH in batches of 1000', async () => {
    const { w, a } = make({ nodes: 2500, cfsOptions: { default_page_size: 150 } });
    const ids = w.ids();
    const patched = await a.config.patchComponents(ids, {
      enabled: false,
      desiredConfig: 'compute-cfg',
      tags: { bos_session: 'S' },
      clearState: true,
    });
    expect(patched).toHaveLength(2500);
    expect(w.counters.callCount('cfs', 'PATCH /v3/components')).toBe(3);
    const got = await a.config.getComponents(ids.slice(0, 450));
    expect(got).toHaveLength(450);
    // 200, 200, 50 ids; pages of 150: 2 + 2 + 1 calls.
    expect(w.counters.callCount('cfs', 'GET /v3/components')).toBe(5);
    expect(got[0]).toEqual({
      id: ids[0],
      desiredConfig: 'compute-cfg',
      configurationStatus: 'pending',
      enabled: false,
      errorCount: 0,
      tags: { bos_session: 'S' },
    });
    w.counters.reset();
    expect(await a.config.getComponents()).toHaveLength(2500);
    expect(w.counters.callCount('cfs', 'GET /v3/components')).toBe(17);
    expect(await a.config.configurationExists('compute-cfg')).toBe(true);
    expect(await a.config.configurationExists('nope')).toBe(false);
  });

  it('images: resolves the default image; an unknown path is an ims 404', async () => {
    const { w, a } = make();
    const img = await a.images.resolve(w.defaultImage.manifest);
    expect(img).toMatchObject({ kernel: w.defaultImage.kernel, initrd: w.defaultImage.initrd, arch: 'x86_64' });
    expect(img.bootParameters).toContain('console=ttyS0,115200');
    expect(img.rootfs).toEqual({ path: w.defaultImage.rootfs, etag: w.defaultImage.rootfsEtag });
    const other = w.images.addImage({ kernelParameters: 'a  b\nc', arch: 'aarch64' });
    expect(await a.images.resolve(other.manifest)).toMatchObject({ bootParameters: 'a b c', arch: 'aarch64' });
    const err = await a.images.resolve('s3://boot-images/none/manifest.json').catch((e) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect(err).toMatchObject({ service: 'ims', status: 404 });
  });
});
