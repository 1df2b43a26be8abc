/**
 * Beyond BOS in the engine: maxInFlight (checked from the event log), canary, failure budget with
 * pause and resume, abort, power-on waves, and explain answering for nodes in flight and blocked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startClusterApi } from '../helpers/cluster-api.ts';
import { resumeSession, abortSession } from '../../src/db/sessions/control.ts';
import { explainComponent, explainSession } from '../../src/api/explain.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

/** Max number of the session's nodes in flight at once, replayed from the event log. */
function maxInFlight(events: any[]): number {
  const inFlight = new Set<string>();
  let max = 0;
  for (const e of events) {
    const admitted = (e.kind === 'rollout' && e.data?.admitted) || (e.kind === 'setup' && e.to_status === 'on_hold');
    const done = (e.kind === 'transition' || e.kind === 'failed') && e.data?.disabled;
    if (admitted) inFlight.add(e.component_id);
    if (done || e.kind === 'failed') inFlight.delete(e.component_id);
    max = Math.max(max, inFlight.size);
  }
  return max;
}

async function sessionRow(c: Cluster, name: string) {
  return (await c.db.pool.query('select * from sessions where name = $1', [name])).rows[0];
}

describe('rollout policies', () => {
  it('never has more than maxInFlight nodes between action and done', async () => {
    c = await startCluster({ world: { nodes: 40, initial: { booted: true } } });
    await c.template('t');
    await c.session('mif', { template: 't', operation: 'reboot', rollout: { maxInFlight: '7' } });
    await c.waitForSession('mif', 90_000);
    const ev = await c.events({ session: 'mif' });
    expect(maxInFlight(ev)).toBeLessThanOrEqual(7);
    expect(maxInFlight(ev)).toBeGreaterThan(1);
    const rows = await c.components();
    expect(rows.every((r) => r.status === 'stable' && !r.enabled)).toBe(true);
    // FIFO: admission order follows the queue order.
    const admitted = ev.filter((e) => e.kind === 'rollout').map((e) => e.component_id);
    expect(admitted).toEqual([...admitted].sort());
  });

  it('a canary with a broken image stops after K nodes; the others are never power-cycled', async () => {
    c = await startCluster({ world: { nodes: 12, initial: { booted: true } }, options: { default_retry_policy: 1 } });
    c.world.faults.setRate('bootsButNeverReports', 1);
    await c.template('t');
    await c.session('can', { template: 't', operation: 'reboot', rollout: { canary: 3 } });
    const ids0 = c.world.ids().sort();
    await c.waitFor(async () => (await sessionRow(c!, 'can')).paused, 'session paused', 60_000);
    // The failed canary nodes are disabled by the next status pass.
    await c.waitFor(async () => (await c!.components(ids0.slice(0, 3))).every((r) => !r.enabled), 'canary disabled', 60_000);
    const s = await sessionRow(c, 'can');
    expect(s.pause_reason).toMatch(/canary failed/);
    const ids = c.world.ids().sort();
    for (const id of ids.slice(0, 3)) expect(c.world.counters.transitionCount('On', id)).toBeGreaterThan(0);
    for (const id of ids.slice(3)) {
      expect(c.world.counters.transitionCount('Soft-Off', id)).toBe(0);
      expect(c.world.counters.transitionCount('On', id)).toBe(0);
    }
    const why = await explainSession(c.db.db, '', 'can');
    expect(why!.groups.find((g) => g.waitingFor === 'session_paused' || g.waitingFor === 'rollout_admission')!.count).toBe(9);
    // Abort: the waiting nodes are disabled where they are, with a clear error; the session completes.
    const stopped = await abortSession(c.db.db, '', 'can', 'test');
    expect(stopped).toHaveLength(9);
    await c.engine.scheduler.kick(c.db.db, ['session-completion']);
    await c.waitForSession('can');
    const waiting = await c.components(ids.slice(3));
    expect(waiting.every((r) => r.failure_reason === 'aborted' && !r.enabled && /aborted/.test(r.error))).toBe(true);
  });

  it('a failure budget pauses the session; resume continues it', async () => {
    c = await startCluster({ world: { nodes: 10, initial: { power: 'off' } }, options: { default_retry_policy: 1 } });
    const ids = c.world.ids().sort();
    c.world.faults.setNodes('neverPowersOn', ids.slice(0, 3));
    await c.template('t');
    await c.session('fb', { template: 't', operation: 'boot', rollout: { maxInFlight: '3', failureBudget: '1' } });
    await c.waitFor(async () => (await sessionRow(c!, 'fb')).paused, 'session paused', 60_000);
    expect((await sessionRow(c, 'fb')).pause_reason).toMatch(/failure budget exceeded/);
    const before = (await c.components()).filter((r) => r.status === 'queued').length;
    expect(before).toBeGreaterThan(0);
    expect(await resumeSession(c.db.db, '', 'fb')).toBe(true);
    await c.engine.scheduler.kick(c.db.db, ['status']);
    await c.waitForSession('fb', 60_000);
    const rows = await c.components();
    expect(
      rows
        .filter((r) => r.status === 'failed')
        .map((r) => r.id)
        .sort(),
    ).toEqual(ids.slice(0, 3));
    expect(rows.filter((r) => r.status === 'stable')).toHaveLength(7);
  });

  it('power-on waves: at most N power-on calls per interval', async () => {
    c = await startCluster({ world: { nodes: 9, initial: { power: 'off' } } });
    await c.template('t');
    await c.session('w', { template: 't', operation: 'boot', rollout: { powerOnWaveSize: 3, powerOnWaveIntervalSeconds: 2 } });
    await c.waitForSession('w', 60_000);
    const ons = (await c.events({ session: 'w' })).filter((e) => e.action === 'powering_on').map((e) => e.at.getTime());
    expect(ons).toHaveLength(9);
    for (const t of ons) expect(ons.filter((u) => u >= t && u < t + 2000).length).toBeLessThanOrEqual(3);
  });

  it("the policy is merged at create: a template edited before the session's setup does not change it", async () => {
    c = await startCluster({ world: { nodes: 6, initial: { booted: true } } });
    const api = await startClusterApi(c);
    try {
      await c.template('t', { rollout: { maxInFlight: '2', jobRetryDelay: 3 } });
      // HSM down: the setup cannot plan and retries, while the template is edited.
      c.world.faults.setService('hsm', { down: true });
      await api.gql(
        `mutation { createSession(input: { name: "m", operation: REBOOT, templateName: "t", rollout: { failureBudget: "1" } }) { session { name } } }`,
      );
      const created = { maxInFlight: '2', jobRetryDelay: 3, failureBudget: '1' };
      expect((await sessionRow(c, 'm')).rollout).toEqual(created);
      await c.db.pool.query(
        `update session_templates set rollout = '{"maxInFlight": "5", "canary": 3, "jobRetryDelay": 9}' where name = 't'`,
      );
      c.world.faults.setService('hsm', { down: false });
      await c.waitFor(async () => (await sessionRow(c!, 'm')).status !== 'pending', 'session set up', 30_000);
      expect((await sessionRow(c, 'm')).rollout).toEqual(created);
      await c.waitForSession('m', 60_000);
      // No canary: nothing paused it; at most 2 in flight, as created.
      expect((await sessionRow(c, 'm')).paused).toBe(false);
      expect(maxInFlight(await c.events({ session: 'm' }))).toBeLessThanOrEqual(2);
    } finally {
      await api.api.close();
    }
  });
});

describe('explain', () => {
  it('says what a node waits for, with the operator criteria, and what blocks it', async () => {
    c = await startCluster({ world: { nodes: 2, initial: { booted: true } }, options: { max_power_off_wait_time: 30 } });
    const [stubborn] = c.world.ids();
    c.world.faults.setNodes('ignoresSoftOff', [stubborn!]);
    await c.template('t');
    await c.session('x', { template: 't', operation: 'reboot', limit: stubborn });
    await c.waitFor(async () => (await c!.components([stubborn!]))[0].status === 'power_off_gracefully_called', 'graceful sent');
    const e = (await explainComponent(c.db.db, c.adapters, stubborn!))!;
    expect(e.waitingFor).toBe('forceful_power_off');
    expect(e.summary).toMatch(/graceful power-off sent \d+ s ago; forceful after 30 s, in \d+ s/);
    const forceful = e.criteria.filter((x) => x.operator === 'power-off-forceful');
    expect(forceful.find((x) => x.criterion.startsWith('status in'))!.met).toBe(true);
    expect(forceful.find((x) => x.criterion.startsWith('max_power_off_wait_time'))!.met).toBe(false);
    expect(e.power?.state).toBe('on');
    expect(e.lastEvents.some((x) => x.action === 'powering_off_gracefully')).toBe(true);
    // A service that cannot be reached is a blocker, not a crash.
    c.world.faults.setService('pcs', { down: true });
    const down = (await explainComponent(c.db.db, c.adapters, stubborn!))!;
    expect(down.blockers.some((b) => b.kind === 'service_unreachable' && /PCS/.test(b.detail))).toBe(true);
    c.world.faults.setService('pcs', { down: false });
    expect(await explainComponent(c.db.db, c.adapters, 'x9999c0s0b0n0')).toBeNull();
  });
});
