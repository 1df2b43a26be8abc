/**
 * A node whose boot failed sits in firmware, and firmware ignores a soft-off (seen on real VMs,
 * test/vm): the forced off that follows is the way out of the failed boot, so the node fails as
 * boot_never_reported, not as power_off_timeout; a node that really cannot be powered off still
 * fails as power_off_timeout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('forced off after a failed boot', () => {
  it('keeps boot_never_reported as the reason', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { power: 'off' } }, options: { default_retry_policy: 1 } });
    const [silent, ok] = c.world.ids() as [string, string];
    c.world.faults.setNodes('bootsButNeverReports', [silent]);
    c.world.faults.setNodes('ignoresSoftOff', [silent]);
    await c.template('t');
    await c.session('nr', { template: 't', operation: 'boot' });
    await c.waitForSession('nr', 60_000);
    const [s] = await c.components([silent]);
    expect(s).toMatchObject({ status: 'failed', failure_reason: 'boot_never_reported' });
    expect(c.world.counters.transitionCount('Soft-Off', silent)).toBeGreaterThanOrEqual(1);
    expect(c.world.counters.transitionCount('Force-Off', silent)).toBeGreaterThanOrEqual(1);
    expect((await c.components([ok]))[0]).toMatchObject({ status: 'stable' });
  });
});
