import { afterEach, describe, expect, it } from 'vitest';
import { configurationStatus, DEFAULT_CFS_OPTIONS, patchComponent, newComponent } from '../../src/sim/cfs.ts';
import { CfsStore } from '../../src/sim/cfs-store.ts';
import type { CfsComponent, CfsConfiguration, CfsStateLayer } from '../../src/sim/types.ts';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';

const C1 = 'a'.repeat(40);
const C2 = 'b'.repeat(40);
const U1 = 'https://vcs/one.git';
const U2 = 'https://vcs/two.git';
const configs = new Map<string, CfsConfiguration>([
  [
    'two',
    {
      name: 'two',
      last_updated: '',
      layers: [
        { clone_url: U1, playbook: 'site.yml', commit: C1 },
        { clone_url: U2, playbook: 'p.yml', commit: C2 },
      ],
    },
  ],
  ['empty', { name: 'empty', last_updated: '', layers: [] }],
  ['nocommit', { name: 'nocommit', last_updated: '', layers: [{ clone_url: U1, playbook: 'site.yml', branch: 'main' }] }],
  ['source', { name: 'source', last_updated: '', layers: [{ source: 'src', playbook: 'site.yml', commit: C1 }] }],
  ['defplay', { name: 'defplay', last_updated: '', layers: [{ clone_url: U1, commit: C1 }] }],
]);
const layer = (
  url: string,
  commit: string,
  status: CfsStateLayer['status'],
  playbook = url === U1 ? 'site.yml' : 'p.yml',
): CfsStateLayer => ({ clone_url: url, playbook, commit, status, last_updated: '', session_name: 's' });
const comp = (desired: string, state: CfsStateLayer[], error_count = 0, retry_policy?: number): CfsComponent => ({
  id: 'x',
  desired_config: desired,
  state,
  error_count,
  retry_policy,
  enabled: true,
  tags: {},
});

describe('configuration_status (csm-services §1.2)', () => {
  const ok1 = layer(U1, C1, 'applied');
  const ok2 = layer(U2, C2, 'applied');
  const table: [string, CfsComponent, string][] = [
    ['no desired config, empty state', comp('', []), 'unconfigured'],
    ['no desired config, some state', comp('', [ok1]), 'configured'],
    ['nonexistent desired config', comp('nope', []), 'unconfigured'],
    ['nonexistent desired config, with state', comp('nope', [ok1]), 'configured'],
    ['zero-layer configuration', comp('empty', []), 'configured'],
    ['nothing applied', comp('two', []), 'pending'],
    ['one of two applied', comp('two', [ok1]), 'pending'],
    ['both applied', comp('two', [ok1, ok2]), 'configured'],
    ['skipped counts as configured', comp('two', [ok1, layer(U2, C2, 'skipped')]), 'configured'],
    ['applied at another commit', comp('two', [ok1, layer(U2, C1, 'applied')]), 'pending'],
    ['failed, retries left', comp('two', [ok1, layer(U2, C2, 'failed')], 1), 'pending'],
    ['failed, retries spent', comp('two', [ok1, layer(U2, C2, 'failed')], 3), 'failed'],
    ['incomplete with retries spent is failed', comp('two', [ok1, layer(U2, C2, 'incomplete')], 3), 'failed'],
    ['incomplete, retries left', comp('two', [ok1, layer(U2, C2, 'incomplete')], 0), 'pending'],
    ['pending with retries spent is failed', comp('two', [ok1], 3), 'failed'],
    ['retry_policy 0: pending is failed at once', comp('two', [], 0, 0), 'failed'],
    ['retry_policy -1: never exhausted', comp('two', [layer(U1, C1, 'failed')], 99, -1), 'pending'],
    ['retry_policy -1, all applied', comp('two', [ok1, ok2], 99, -1), 'configured'],
    ['component retry_policy overrides default', comp('two', [layer(U1, C1, 'failed')], 2, 5), 'pending'],
    ['layer without commit is unconfigured', comp('nocommit', []), 'unconfigured'],
    ['unconfigured beats failed', comp('nocommit', [layer(U1, C1, 'failed')], 9), 'unconfigured'],
    ['source layer (no clone_url) is unconfigured', comp('source', []), 'unconfigured'],
    ['default playbook fills a missing playbook', comp('defplay', [layer(U1, C1, 'applied', 'site.yml')]), 'configured'],
  ];
  it.each(table)('%s', (_name, c, want) => {
    expect(configurationStatus(c, configs, DEFAULT_CFS_OPTIONS)).toBe(want);
  });
});

describe('CFS component writes', () => {
  it('merges tags, deletes empty ones, replaces state, resets error_count like CFS', () => {
    let c = newComponent('x', { tags: { a: '1', b: '2' } }, 'T0');
    c = { ...c, error_count: 2 };
    c = patchComponent(c, { tags: { a: '', c: '3' } }, 'T1');
    expect(c.tags).toEqual({ b: '2', c: '3' });
    expect(c.error_count).toBe(2);
    c = patchComponent(c, { desired_config: 'two' }, 'T2');
    expect(c.error_count).toBe(0);
    c = patchComponent(c, { error_count: 4, state: [{ clone_url: U1, playbook: 'site.yml', commit: `${C1}_failed` }] }, 'T3');
    expect(c.state).toEqual([{ clone_url: U1, playbook: 'site.yml', commit: C1, status: 'failed', last_updated: 'T3', session_name: '' }]);
    expect(c.error_count).toBe(4);
    c = patchComponent(c, { state: [] }, 'T4');
    expect(c).toMatchObject({ state: [], error_count: 0 });
  });

  it('state_append replaces the layer with the same repo and playbook and appends it last', () => {
    let c = newComponent('x', {}, 'T0');
    c = patchComponent(c, { state_append: { clone_url: U1, playbook: 'site.yml', commit: C1, session_name: 's1' } }, 'T1');
    c = patchComponent(c, { state_append: { clone_url: U2, playbook: 'p.yml', commit: C2, session_name: 's1' } }, 'T2');
    c = patchComponent(c, { state_append: { clone_url: U1, playbook: 'site.yml', commit: `${C2}_failed`, session_name: 's2' } }, 'T3');
    expect(c.state.map((l) => [l.clone_url, l.commit, l.status, l.last_updated])).toEqual([
      [U2, C2, 'applied', 'T2'],
      [U1, C2, 'failed', 'T3'],
    ]);
  });

  it('lists sorted by id with next paging carrying the original query', () => {
    const s = new CfsStore({ default_page_size: 2 });
    for (const id of ['c', 'a', 'e', 'b', 'd']) s.put(id, {});
    s.patch('d', { enabled: false });
    const p1 = s.list({ enabled: true });
    expect(p1.components.map((c) => c.id)).toEqual(['a', 'b']);
    expect(p1.next).toMatchObject({ enabled: true, limit: 2, after_id: 'b', ids: '', status: '' });
    const p2 = s.list({ enabled: true, after_id: 'b' });
    expect(p2.components.map((c) => c.id)).toEqual(['c', 'e']);
    expect(p2.next).toBeNull();
    expect(s.list({ ids: 'e,zz,a', limit: 10 }).components.map((c) => c.id)).toEqual(['a', 'e']);
  });

  it('dict-form PATCH applies to matching existing components; empty filters match all', () => {
    const s = new CfsStore();
    for (const id of ['a', 'b', 'c']) s.put(id, {});
    expect(s.patchWhere({ ids: 'a,zz' }, { desired_config: 'x', tags: { bos_session: 's' } })).toEqual(['a']);
    expect(s.patchWhere({ config_name: 'x' }, { enabled: false })).toEqual(['a']);
    expect(s.patchWhere({}, { tags: { t: '1' } })).toEqual(['a', 'b', 'c']);
    expect(s.patchWhere({ tags: 'bos_session=s' }, { enabled: true })).toEqual(['a']);
  });
});

const worlds: SimWorld[] = [];
const make = (o: WorldOptions = {}) => {
  const w = new SimWorld({ nodes: 8, ...o });
  worlds.push(w);
  return w;
};
afterEach(() => worlds.splice(0).forEach((w) => w.close()));

describe('sim cfs-batcher', () => {
  it('configures enabled pending components in batches of batch_size', async () => {
    const w = make({ nodes: 10, batcher: { batchSize: 4, batchWindowMs: 5, checkIntervalMs: 1, runTimeMs: 2 } });
    const sessions: string[][] = [];
    w.on('cfs-session', (s) => sessions.push(s.ids));
    const ids = w.ids();
    w.cfs.patchWhere({ ids: ids.join(',') }, { desired_config: 'compute-cfg', enabled: true, state: [], tags: { bos_session: 'S' } });
    await w.waitUntil(() => ids.every((id) => w.cfs.status(id) === 'configured'), 3000, 'all configured');
    expect(sessions.map((s) => s.length).sort()).toEqual([2, 4, 4]);
    expect(new Set(sessions.flat()).size).toBe(10);
    const c = w.cfs.components.get(ids[0]!)!;
    expect(c.state).toHaveLength(1);
    expect(c.state[0]).toMatchObject({ status: 'applied', commit: w.cfs.configurations.get('compute-cfg')!.layers[0]!.commit });
    expect(c.state[0]!.session_name).toMatch(/^batcher-/);
    expect([...w.batcher.sessions.values()][0]).toMatchObject({ status: 'complete', succeeded: 'true', tags: { bos_session: 'S' } });
  });

  it('leaves disabled components alone until the node re-enables them', async () => {
    const w = make({ batcher: { batchWindowMs: 0, checkIntervalMs: 1, runTimeMs: 1 } });
    const A = w.ids()[0]!;
    w.cfs.patch(A, { desired_config: 'compute-cfg', enabled: false, state: [] });
    // Let the batcher look (it must not take the disabled node), then let the node boot.
    await w.batcherIdle();
    expect(w.cfs.status(A)).toBe('pending');
    w.transition('On', [A]);
    await w.waitFor('configured', (e) => e.id === A, 2000);
    expect(w.cfs.status(A)).toBe('configured');
  });

  it('a node whose configuration fails is retried until its retry policy is spent, then failed', async () => {
    const w = make({
      batcher: { batchWindowMs: 0, checkIntervalMs: 1, runTimeMs: 1 },
      faults: { nodes: { configurationFails: ['x1000c0s0b0n0'] } },
    });
    const [A, B] = w.ids() as [string, string];
    w.cfs.patchWhere({ ids: `${A},${B}` }, { desired_config: 'compute-cfg', enabled: true, state: [] });
    await w.waitUntil(() => w.cfs.status(A) === 'failed' && w.cfs.status(B) === 'configured', 3000);
    expect(w.cfs.components.get(A)!.error_count).toBe(3);
    expect(w.cfs.components.get(A)!.state[0]!.status).toBe('failed');
    await w.batcherIdle();
    expect(w.cfs.components.get(A)!.error_count).toBe(3);
  });

  it('a configuration change makes configured nodes pending again and the batcher picks them up', async () => {
    const w = make({ initial: { desiredConfig: 'compute-cfg' }, batcher: { batchWindowMs: 0, checkIntervalMs: 1, runTimeMs: 1 } });
    const ids = w.ids();
    await w.batcherIdle();
    expect(ids.every((id) => w.cfs.status(id) === 'configured')).toBe(true);
    const old = w.cfs.configurations.get('compute-cfg')!.layers[0]!;
    w.cfs.putConfiguration('compute-cfg', [old, { clone_url: 'https://vcs/extra.git', playbook: 'extra.yml', commit: 'c'.repeat(40) }]);
    expect(w.cfs.status(ids[0]!)).toBe('pending');
    await w.waitUntil(() => ids.every((id) => w.cfs.status(id) === 'configured'), 3000);
    expect(w.cfs.components.get(ids[0]!)!.state.map((l) => l.playbook)).toEqual(['site.yml', 'extra.yml']);
  });

  it('a disabled batcher leaves pending work until it is enabled again', async () => {
    const w = make({ batcher: { disabled: true, batchWindowMs: 0, checkIntervalMs: 1, runTimeMs: 1 } });
    const [A] = w.ids() as [string];
    w.cfs.patch(A, { desired_config: 'compute-cfg', state: [] });
    await w.batcherIdle();
    expect(w.cfs.status(A)).toBe('pending');
    w.batcher.set({ disabled: false });
    await w.waitFor('configured', (e) => e.id === A, 2000);
  });
});
