/**
 * Every classified failure reason, each produced by its own fault in the simulator (the ones not
 * already covered by engine-faults and engine-rollout): power_off_timeout, bmc_unreachable (PCS's
 * undefined: unknown power), booted_wrong_artifacts, configuration_unknown, not_in_inventory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('classified failures', () => {
  it('power_off_timeout: PCS never shows the node off, forceful attempts run out', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { booted: true } }, options: { default_retry_policy: 2 } });
    const [stuck, ok] = c.world.ids();
    c.world.faults.setNodes('neverPowersOff', [stuck!]);
    await c.template('t');
    await c.session('off', { template: 't', operation: 'shutdown' });
    await c.waitForSession('off', 60_000);
    const [s] = await c.components([stuck!]);
    expect(s).toMatchObject({ status: 'failed', failure_reason: 'power_off_timeout', enabled: false });
    expect(c.world.counters.transitionCount('Force-Off', stuck)).toBe(2);
    expect((await c.components([ok!]))[0]).toMatchObject({ status: 'stable' });
  });

  it('bmc_unreachable (CSM): PCS answers undefined for a node mid-reboot; it is held at once, never forced off, and fails at power_unknown_timeout', async () => {
    c = await startCluster({
      world: { nodes: 2, initial: { booted: true } },
      options: { default_retry_policy: 2, power_unknown_timeout: 3 },
    });
    const [dead, ok] = c.world.ids();
    c.world.faults.setNodes('ignoresSoftOff', [dead!]);
    await c.template('t');
    await c.session('r', { template: 't', operation: 'reboot' });
    // The BMC goes away once the graceful power-off was sent: PCS's own poll then answers undefined.
    await c.waitFor(async () => (await c!.components([dead!]))[0].last_action === 'powering_off_gracefully', 'graceful power-off sent');
    c.world.faults.setNodes('powerUndefined', [dead!]);
    const fault = Date.now();
    await c.waitFor(async () => (await c!.components([dead!]))[0].failure_reason === 'bmc_unreachable', 'held with the cause', 10_000);
    const heldAfter = Date.now() - fault;
    const [held] = await c.components([dead!]);
    expect(held).toMatchObject({ status: 'on_hold', enabled: true, phase: 'powering_off' });
    expect(held.error).toMatch(/^Power unknown \(bmc_unreachable\): PCS reports powerState undefined/);
    // On the timeline at once: the status operator's event with rule U1 and the cause.
    const ev = (await c.events({ component: dead! })).find((e) => e.data?.rule === 'U1');
    expect(ev).toMatchObject({ reason: 'bmc_unreachable', to_status: 'on_hold' });
    await c.waitForSession('r', 60_000);
    const failedAfter = Date.now() - fault;
    const [s] = await c.components([dead!]);
    expect(s).toMatchObject({ status: 'failed', failure_reason: 'bmc_unreachable', enabled: false });
    expect(s.error).toMatch(/^Power unknown for \d+ s \(bmc_unreachable\): PCS reports powerState undefined/);
    // Held, not retried: no forceful power-off was counted against the dead BMC.
    expect(c.world.counters.transitionCount('Force-Off', dead)).toBe(0);
    expect(s.power_off_forceful_attempts).toBe(0);
    expect(heldAfter).toBeLessThan(5_000);
    expect(failedAfter).toBeGreaterThanOrEqual(3_000);
    expect(failedAfter).toBeLessThan(15_000);
    expect((await c.components([ok!]))[0]).toMatchObject({ status: 'stable' });
  });

  it('booted_wrong_artifacts: the node reports a token of other boot artifacts', async () => {
    c = await startCluster({ world: { nodes: 1, initial: { power: 'off' } }, options: { default_retry_policy: 1 } });
    const [id] = c.world.ids();
    await c.template('a');
    await c.session('first', { template: 'a', operation: 'boot' });
    await c.waitForSession('first');
    const oldToken = (await c.components([id!]))[0].actual_bss_token;
    // A second image's boot, but the node keeps coming up with the first one (say its BSS entry is overridden).
    await c.db.pool.query(`insert into session_templates (name, cfs_configuration, boot_sets)
      select 'b', cfs_configuration, jsonb_set(boot_sets, '{compute,kernel_parameters}', '"console=ttyS1"') from session_templates where name = 'a'`);
    const reports = createReportBatcher(c.db.db, c.engine.scheduler);
    c.world.setReportHandler(async (node) => {
      const r = await reports.report({ id: node, token: oldToken, actor: `node:${node}` });
      if (!r.ok) throw new Error(r.message);
    });
    await c.session('second', { template: 'b', operation: 'reboot' });
    await c.waitForSession('second', 60_000);
    expect((await c.components([id!]))[0]).toMatchObject({ status: 'failed', failure_reason: 'booted_wrong_artifacts' });
  });

  it('configuration_unknown: the desired configuration does not exist in CFS', async () => {
    c = await startCluster({ world: { nodes: 1, initial: { power: 'off' } } });
    await c.template('t', { configuration: 'no-such-config' });
    await c.session('cfg', { template: 't', operation: 'boot' });
    await c.waitForSession('cfg', 60_000);
    const [r] = await c.components();
    expect(r).toMatchObject({ status: 'failed', failure_reason: 'configuration_unknown' });
    expect(r.error).toMatch(/not reporting a valid configuration status.*unconfigured/);
  });

  it('not_in_inventory: a node CFS no longer knows fails instead of silently dropping out', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { booted: true } } });
    const [gone, ok] = c.world.ids();
    c.world.cfs.delete(gone!);
    await c.template('t');
    await c.session('ni', { template: 't', operation: 'reboot' });
    await c.waitForSession('ni', 60_000);
    expect((await c.components([gone!]))[0]).toMatchObject({
      status: 'failed',
      failure_reason: 'not_in_inventory',
      error: 'Component information was not returned by cfs',
    });
    expect((await c.components([ok!]))[0]).toMatchObject({ status: 'stable' });
  });
});
