/**
 * Actions counted where the engine records their outcome, through whole sessions on the in-process
 * engine: a BSS outage fails power-on attempts for service_unavailable (counted by reason), the
 * attempts after it count as retries and succeed; a node that never powers on is given up on at the
 * retry limit, counted by its failure reason.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { local, value } from '../helpers/metrics.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const count = async (name: string, labels: Record<string, string> = {}) => value(await local(), name, labels);

describe('actions: started, succeeded, failed by reason, retried, given up on', () => {
  it('a BSS outage: power-on attempts fail for service_unavailable, then are retried and succeed', async () => {
    c = await startCluster({ world: { nodes: 3, initial: { power: 'off' } }, options: { default_retry_policy: 50 } });
    const started0 = await count('bootorch_actions_started_total', { action: 'powering_on' });
    const failed0 = await count('bootorch_actions_failed_total', { action: 'powering_on', reason: 'service_unavailable' });
    const retried0 = await count('bootorch_actions_retried_total', { action: 'powering_on' });
    const ok0 = await count('bootorch_actions_succeeded_total', { action: 'powering_on' });
    c.world.faults.setService('bss', { down: true });
    await c.template('t');
    await c.session('b', { template: 't', operation: 'boot' });
    await c.waitFor(
      async () => (await count('bootorch_actions_failed_total', { action: 'powering_on', reason: 'service_unavailable' })) >= failed0 + 3,
      'three power-on attempts failed for service_unavailable',
    );
    c.world.faults.setService('bss', { down: false });
    await c.waitForSession('b', 45_000);
    const failed = (await count('bootorch_actions_failed_total', { action: 'powering_on', reason: 'service_unavailable' })) - failed0;
    const started = (await count('bootorch_actions_started_total', { action: 'powering_on' })) - started0;
    expect((await count('bootorch_actions_succeeded_total', { action: 'powering_on' })) - ok0).toBe(3);
    expect(started).toBe(failed + 3);
    expect((await count('bootorch_actions_retried_total', { action: 'powering_on' })) - retried0).toBe(failed);
    expect(c.world.counters.transitionCount('On', c.world.ids()[0])).toBe(1);
  });

  it('a node that never powers on: given up on at the retry limit, counted by reason', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { power: 'off' } }, options: { default_retry_policy: 2 } });
    const [dead] = c.world.ids();
    c.world.faults.setNodes('neverPowersOn', [dead!]);
    const exhausted0 = await count('bootorch_actions_exhausted_total', { action: 'powering_on', reason: 'power_on_timeout' });
    const retried0 = await count('bootorch_actions_retried_total', { action: 'powering_on' });
    await c.template('t');
    await c.session('b', { template: 't', operation: 'boot' });
    await c.waitForSession('b', 45_000);
    expect((await count('bootorch_actions_exhausted_total', { action: 'powering_on', reason: 'power_on_timeout' })) - exhausted0).toBe(1);
    expect((await count('bootorch_actions_retried_total', { action: 'powering_on' })) - retried0).toBe(1);
    expect(await count('bootorch_operator_ticks_total', { operator: 'power-on', outcome: 'ok' })).toBeGreaterThan(0);
  });
});
