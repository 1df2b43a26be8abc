/**
 * Faults through the engine: each simulator fault ends in its escalation or its classified failure,
 * within the retry policy, and the healthy nodes finish regardless.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('engine: faults become escalations, retries and classified failures', () => {
  it('a node that ignores soft-off is forced off after max_power_off_wait_time', async () => {
    c = await startCluster({ world: { nodes: 3, initial: { booted: true } } });
    const [stubborn, ...rest] = c.world.ids();
    c.world.faults.setNodes('ignoresSoftOff', [stubborn!]);
    await c.template('t');
    await c.session('r', { template: 't', operation: 'reboot' });
    await c.waitForSession('r');
    const rows = await c.components();
    expect(rows.every((r) => r.status === 'stable' && !r.enabled)).toBe(true);
    expect(c.world.counters.transitionCount('Force-Off', stubborn)).toBe(1);
    for (const id of rest) expect(c.world.counters.transitionCount('Force-Off', id)).toBe(0);
    const ev = await c.events({ component: stubborn });
    const forced = ev.findIndex((e) => e.action === 'powering_off_forcefully');
    const graceful = ev.findIndex((e) => e.action === 'powering_off_gracefully');
    expect(graceful).toBeGreaterThanOrEqual(0);
    expect(forced).toBeGreaterThan(graceful);
    // The wait was honoured: forceful came at least max_power_off_wait_time after graceful.
    expect(ev[forced].at.getTime() - ev[graceful].at.getTime()).toBeGreaterThanOrEqual(1000);
  });

  it('a node that never powers on fails after the retry policy, with the error and reason', async () => {
    c = await startCluster({ world: { nodes: 3, initial: { power: 'off' } }, options: { default_retry_policy: 2 } });
    const [dead, ...rest] = c.world.ids();
    c.world.faults.setNodes('neverPowersOn', [dead!]);
    await c.template('t');
    await c.session('b', { template: 't', operation: 'boot' });
    await c.waitForSession('b', 45_000);
    const [row] = await c.components([dead!]);
    expect(row).toMatchObject({ status: 'failed', enabled: false, failure_reason: 'power_on_timeout' });
    expect(row.error).toMatch(/still off/);
    // Exactly the retry policy's attempts, no more.
    expect(c.world.counters.transitionCount('On', dead)).toBe(2);
    for (const r of await c.components(rest)) expect(r).toMatchObject({ status: 'stable', enabled: false });
  });

  it('a failed configuration fails the node with configuration_failed', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { power: 'off' } } });
    const [bad, good] = c.world.ids();
    c.world.faults.setNodes('configurationFails', [bad!]);
    await c.db.pool.query(`update options set data = data || '{"default_retry_policy": 1}'`);
    await c.template('t');
    await c.session('cfg', { template: 't', operation: 'boot' });
    await c.waitForSession('cfg', 45_000);
    const [b] = await c.components([bad!]);
    expect(b).toMatchObject({ status: 'failed', failure_reason: 'configuration_failed', error: 'cfs configuration failed' });
    const [g] = await c.components([good!]);
    expect(g).toMatchObject({ status: 'stable' });
  });

  it('a node that boots but never reports is rebooted after max_boot_wait_time, then fails', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { power: 'off' } }, options: { default_retry_policy: 2 } });
    const [silent, ok] = c.world.ids();
    c.world.faults.setNodes('bootsButNeverReports', [silent!]);
    await c.template('t');
    await c.session('nr', { template: 't', operation: 'boot' });
    await c.waitForSession('nr', 60_000);
    const [s] = await c.components([silent!]);
    expect(s).toMatchObject({ status: 'failed', failure_reason: 'boot_never_reported' });
    expect(c.world.counters.transitionCount('On', silent)).toBe(2);
    expect(c.world.counters.transitionCount('Soft-Off', silent)).toBeGreaterThanOrEqual(1);
    const [o] = await c.components([ok!]);
    expect(o).toMatchObject({ status: 'stable' });
  });

  it('a power service that answers 500 becomes component errors and retries, then recovers', async () => {
    c = await startCluster({ world: { nodes: 3, initial: { power: 'off' } }, options: { default_retry_policy: 5 } });
    c.world.faults.setService('pcs', { down: true });
    await c.template('t');
    await c.session('pcs', { template: 't', operation: 'boot' });
    await c.waitFor(async () => (await c!.components()).every((r) => /PCS/.test(r.error)), 'PCS errors recorded');
    const during = await c.components();
    expect(during.every((r) => r.failure_reason === 'service_unavailable' && r.enabled)).toBe(true);
    c.world.faults.setService('pcs', { down: false });
    await c.waitForSession('pcs', 45_000);
    for (const r of await c.components()) expect(r).toMatchObject({ status: 'stable', error: '' });
  });
});
