/**
 * Whole sessions through the engine on the simulated cluster: boot, reboot, shutdown, boot with
 * nothing to do but configure, limits, and two overlapping sessions. Asserts each node's final
 * state, the power actions the hardware saw, and the event timeline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

function expectDone(rows: any[], kernel: string) {
  for (const r of rows) {
    expect(r, r.id).toMatchObject({ enabled: false, phase: '', status: 'stable', error: '', actual_kernel: kernel });
    expect(r.actual_kernel_parameters, r.id).toBe(r.desired_kernel_parameters);
  }
}

describe('engine: whole sessions on the simulated cluster', () => {
  it('boots nodes from off into the image and configuration', async () => {
    c = await startCluster({ world: { nodes: 6, initial: { power: 'off' } } });
    await c.template('t');
    await c.session('s1', { template: 't', operation: 'boot' });
    const s = await c.waitForSession('s1');
    expect(s.error).toBeNull();
    expect(s.components.split(',')).toHaveLength(6);
    const rows = await c.components();
    expectDone(rows, c.world.defaultImage.kernel);
    for (const r of rows) {
      expect(r.desired_kernel_parameters).toContain('bos_update_frequency=4h');
      expect(c.world.node(r.id)!.power).toBe('on');
      expect(c.world.counters.transitionCount('On', r.id)).toBe(1);
      expect(c.world.counters.transitionCount('Soft-Off', r.id)).toBe(0);
    }
    const cfs = await c.adapters.config.getComponents(rows.map((r) => r.id));
    expect(cfs.every((x) => x.configurationStatus === 'configured' && x.desiredConfig === 'compute-cfg')).toBe(true);
    // The timeline of one node tells the whole story, in order.
    const ev = await c.events({ component: rows[0].id });
    const path = ev.filter((e) => e.kind === 'transition').map((e) => e.to_phase);
    expect(path[0]).toBe('powering_on');
    expect(path.at(-1)).toBe('');
    expect(ev.some((e) => e.kind === 'action' && e.action === 'powering_on')).toBe(true);
    expect(ev.some((e) => e.kind === 'report')).toBe(true);
    // One PCS call per chunk, not one per node.
    expect(c.world.counters.callCount('pcs', 'POST /transitions')).toBe(1);
    const snap = await c.db.pool.query('select data from session_status_snapshots where name = $1', ['s1']);
    expect(snap.rowCount).toBe(1);
  });

  it('reboots booted nodes: one graceful off and one on each', async () => {
    c = await startCluster({ world: { nodes: 5, initial: { booted: true } } });
    await c.template('t');
    await c.session('r1', { template: 't', operation: 'reboot' });
    await c.waitForSession('r1');
    const rows = await c.components();
    expectDone(rows, c.world.defaultImage.kernel);
    for (const r of rows) {
      expect(c.world.counters.transitionCount('Soft-Off', r.id)).toBe(1);
      expect(c.world.counters.transitionCount('Force-Off', r.id)).toBe(0);
      expect(c.world.counters.transitionCount('On', r.id)).toBe(1);
    }
    const ev = await c.events({ session: 'r1' });
    expect(ev.filter((e) => e.kind === 'setup')).toHaveLength(5);
  });

  it('shuts nodes down', async () => {
    c = await startCluster({ world: { nodes: 4, initial: { booted: true } } });
    await c.template('t');
    await c.session('off', { template: 't', operation: 'shutdown' });
    await c.waitForSession('off');
    for (const r of await c.components()) {
      expect(r).toMatchObject({ enabled: false, phase: '', status: 'stable', desired_kernel: '' });
      expect(c.world.node(r.id)!.power).toBe('off');
      expect(c.world.counters.transitionCount('On', r.id)).toBe(0);
    }
  });

  it('a boot of nodes already in the desired state only configures them', async () => {
    c = await startCluster({ world: { nodes: 4, initial: { power: 'off' } } });
    await c.template('t');
    await c.session('first', { template: 't', operation: 'boot' });
    await c.waitForSession('first');
    await c.db.pool.query(`update session_templates set cfs_configuration = 'uan-cfg'`);
    const on = c.world.counters.transitionCount('On');
    await c.session('second', { template: 't', operation: 'boot' });
    const s = await c.waitForSession('second');
    expect(s.error).toBeNull();
    expect(c.world.counters.transitionCount('On')).toBe(on);
    expect(c.world.counters.transitionCount('Soft-Off')).toBe(0);
    const cfs = await c.adapters.config.getComponents(c.world.ids());
    expect(cfs.every((x) => x.desiredConfig === 'uan-cfg' && x.configurationStatus === 'configured')).toBe(true);
    expectDone(await c.components(), c.world.defaultImage.kernel);
  });

  it('applies limit expressions and leaves other nodes untouched', async () => {
    c = await startCluster({ world: { nodes: 8, initial: { booted: true } } });
    const ids = c.world.ids();
    await c.template('t');
    await c.session('lim', { template: 't', operation: 'reboot', limit: `${ids[0]},${ids[1]},${ids[2]},!${ids[1]}` });
    const s = await c.waitForSession('lim');
    expect(s.components.split(',').sort()).toEqual([ids[0], ids[2]].sort());
    for (const id of ids) {
      expect(c.world.counters.transitionCount('Soft-Off', id)).toBe(id === ids[0] || id === ids[2] ? 1 : 0);
    }
  });

  it('completes with the error when nothing matches', async () => {
    c = await startCluster({ world: { nodes: 2 } });
    await c.template('t');
    await c.session('none', { template: 't', operation: 'boot', limit: 'x9999c0s0b0n0' });
    const s = await c.waitForSession('none');
    expect(s.error).toBe('No nodes were found to act upon.');
  });

  it('two overlapping sessions: the newer takes its nodes, the older completes without them', async () => {
    c = await startCluster({ world: { nodes: 6, initial: { booted: true }, powerOnDelayMs: 300 } });
    const ids = c.world.ids();
    await c.template('t');
    await c.session('old', { template: 't', operation: 'reboot' });
    // As soon as the old session has started acting, a newer one shuts two of its nodes down.
    await c.waitFor(async () => (await c!.events({ session: 'old' })).some((e) => e.action === 'powering_off_gracefully'), 'old acting');
    await c.session('new', { template: 't', operation: 'shutdown', limit: `${ids[0]},${ids[1]}` });
    await c.waitForSession('new');
    await c.waitForSession('old');
    const rows = await c.components();
    for (const r of rows) {
      if (r.id === ids[0] || r.id === ids[1]) expect(r).toMatchObject({ session: 'new', desired_kernel: '', enabled: false });
      else expect(r).toMatchObject({ session: 'old', status: 'stable', enabled: false });
    }
    const ev0 = await c.events({ component: ids[0] });
    expect(new Set(ev0.map((e) => e.session))).toEqual(new Set(['old', 'new']));
    expect(c.world.node(ids[0])!.power).toBe('off');
  });

  it("a shutdown that takes a node while an older session's power-on is still on its way leaves it off", async () => {
    c = await startCluster({
      world: { nodes: 2, powerOnDelayMs: 3000 },
      options: { max_power_on_wait_time: 10, max_boot_wait_time: 20 },
    });
    const ids = c.world.ids();
    await c.template('t');
    await c.session('old', { template: 't', operation: 'boot' });
    await c.waitFor(
      async () => (await c!.events({ session: 'old', component: ids[0] })).some((e) => e.action === 'powering_on'),
      'power-on sent',
    );
    await c.session('new', { template: 't', operation: 'shutdown', limit: ids[0] });
    await c.waitForSession('new');
    // The other node was powered on in the same call, so once it has booted the first one's power-on has landed too.
    await c.waitForSession('old');
    expect(c.world.node(ids[1])!.power).toBe('on');
    expect(c.world.node(ids[0])!.power).toBe('off');
    const [row] = (await c.components()).filter((r) => r.id === ids[0]);
    expect(row).toMatchObject({ session: 'new', enabled: false });
  });
});
