import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRig, type Rig } from './harness.ts';
import { contractTest } from './contracts.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ nodes: 1200, cfsOptions: { default_page_size: 500 }, batcher: { disabled: true } });
});
afterAll(() => rig.close());

describe('CFS v3 client against the simulator, under the CFS contract', () => {
  it('PATCHes in the dict form with ids filters, 1000 ids per call', async () => {
    const ids = rig.world.ids();
    const patched = await rig.adapters.config.patchComponents(ids, {
      enabled: false,
      desiredConfig: 'compute-cfg',
      tags: { bos_session: 'b7e6' },
      clearState: true,
    });
    expect(patched).toEqual(ids);
    const calls = rig.exchanges.filter((x) => x.method === 'PATCH');
    expect(calls).toHaveLength(2);
    expect(JSON.parse(calls[0]!.requestBody)).toEqual({
      patch: { enabled: false, desired_config: 'compute-cfg', tags: { bos_session: 'b7e6' }, state: [] },
      filters: { ids: ids.slice(0, 1000).join(',') },
    });
  });

  it('GETs by ids in batches of 200 and follows next through every page', async () => {
    const ids = rig.world.ids();
    const n = rig.exchanges.length;
    const some = await rig.adapters.config.getComponents(ids.slice(0, 450));
    expect(some.map((c) => c.id)).toEqual(ids.slice(0, 450));
    expect(some[0]).toEqual({
      id: ids[0],
      desiredConfig: 'compute-cfg',
      configurationStatus: 'pending',
      enabled: false,
      errorCount: 0,
      tags: { bos_session: 'b7e6' },
    });
    const gets = rig.exchanges.slice(n);
    expect(gets.map((x) => new URLSearchParams(x.query).get('ids')!.split(',').length)).toEqual([200, 200, 50]);
    const m = rig.exchanges.length;
    const all = await rig.adapters.config.getComponents();
    expect(all).toHaveLength(1200);
    const pages = rig.exchanges.slice(m);
    expect(pages).toHaveLength(3);
    expect(new URLSearchParams(pages[1]!.query).get('after_id')).toBe(all[499]!.id);
    expect(JSON.parse(pages[0]!.responseBody).next).toMatchObject({ limit: 500, after_id: all[499]!.id, ids: '', enabled: null });
    expect(JSON.parse(pages[2]!.responseBody).next).toBeNull();
  });

  it('knows which configurations exist', async () => {
    expect(await rig.adapters.config.configurationExists('compute-cfg')).toBe(true);
    expect(await rig.adapters.config.configurationExists('missing-cfg')).toBe(false);
  });

  it('keeps CFS semantics on the wire: node re-enable, Ansible state_append, status, errors', async () => {
    const [a, b] = rig.world.ids() as [string, string];
    // cfs-state-reporter
    let r = await rig.raw(`/v3/components/${a}`, { method: 'PATCH', body: { state: [], enabled: true } });
    expect(await r.json()).toMatchObject({ id: a, enabled: true, state: [], error_count: 0 });
    // the AEE aggregator, failing then succeeding
    const layer = rig.world.cfs.configurations.get('compute-cfg')!.layers[0]!;
    r = await rig.raw(`/v3/components/${a}`, {
      method: 'PATCH',
      body: {
        state_append: { session_name: 'batcher-1', clone_url: layer.clone_url, playbook: 'site.yml', commit: `${layer.commit}_failed` },
        error_count: 1,
      },
    });
    expect((await r.json()).state[0]).toMatchObject({ status: 'failed', commit: layer.commit });
    let c = await (await rig.raw(`/v3/components/${a}?state_details=true`)).json();
    expect(c).toMatchObject({ configuration_status: 'pending', error_count: 1 });
    await rig.raw(`/v3/components/${a}`, {
      method: 'PATCH',
      body: {
        state_append: { session_name: 'batcher-2', clone_url: layer.clone_url, playbook: 'site.yml', commit: layer.commit },
        error_count: 0,
      },
    });
    c = await (await rig.raw(`/v3/components?ids=${a},${b}&status=configured`)).json();
    expect(c.components.map((x: { id: string }) => x.id)).toEqual([a]);
    expect(c.components[0].state).toBeUndefined();
    expect((await rig.raw('/v3/components/x9999c0s0b0n0')).status).toBe(404);
    const list = await rig.raw('/v3/components', {
      method: 'PATCH',
      body: [
        { id: a, enabled: false },
        { id: 'x9999c0s0b0n0', enabled: false },
      ],
    });
    expect(list.status).toBe(404);
    expect(rig.world.cfs.components.get(a)!.enabled).toBe(true);
    const ok = await rig.raw('/v3/components', { method: 'PATCH', body: [{ id: a, tags: { bos_session: '' } }] });
    expect(await ok.json()).toEqual({ component_ids: [a] });
    expect(rig.world.cfs.components.get(a)!.tags).toEqual({});
    expect((await rig.raw('/v3/components?status=bogus')).status).toBe(400);
  });

  it('stores configurations and options', async () => {
    const put = await rig.raw('/v3/configurations/uan-cfg-2', {
      method: 'PUT',
      body: { layers: [{ name: 'uan', clone_url: 'https://vcs/uan.git', playbook: 'site.yml', branch: 'main' }] },
    });
    const cfg = await put.json();
    expect(cfg.layers[0].commit).toMatch(/^[a-f0-9]{40}$/);
    expect(cfg.last_updated).toMatch(/Z$/);
    const dup = await rig.raw('/v3/configurations/dup', {
      method: 'PUT',
      body: {
        layers: [
          { clone_url: 'https://x', playbook: 'a.yml', commit: 'a'.repeat(40) },
          { clone_url: 'https://x', playbook: 'a.yml', commit: 'b'.repeat(40) },
        ],
      },
    });
    expect(dup.status).toBe(400);
    expect((await rig.raw('/v3/configurations/compute-cfg', { method: 'DELETE' })).status).toBe(400);
    expect((await (await rig.raw('/v3/configurations')).json()).configurations.length).toBeGreaterThanOrEqual(3);
    const opts = await (await rig.raw('/v3/options', { method: 'PATCH', body: { default_batcher_retry_policy: 5 } })).json();
    expect(opts.default_batcher_retry_policy).toBe(5);
  });

  contractTest('every exchange satisfied the CFS contract', async () => {
    expect(await rig.violations()).toEqual([]);
  });
});
