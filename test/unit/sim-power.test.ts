import { afterEach, describe, expect, it } from 'vitest';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';

const worlds: SimWorld[] = [];
const make = (o: WorldOptions = {}) => {
  const w = new SimWorld({ nodes: 8, ...o });
  worlds.push(w);
  return w;
};
afterEach(() => worlds.splice(0).forEach((w) => w.close()));

const A = 'x1000c0s0b0n0';
const B = 'x1000c0s0b0n1';

describe('sim power and boot', () => {
  it('answers a transition at once and powers on later, then boots and reports the BSS token', async () => {
    const reports: [string, string][] = [];
    const w = make({ onReport: (id, token) => void reports.push([id, token]) });
    const token = w.setBootParameters({ hosts: [A, B], kernel: 'k', initrd: 'i', params: 'p' });
    const id = w.transition('On', [A, B]);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(w.node(A)!.power).toBe('off');
    expect(w.power.transitions.get(id)!.transitionStatus).toBe('in-progress');
    await w.waitUntil(() => reports.length === 2, 2000, 'two reports');
    expect(reports.sort()).toEqual([
      [A, token],
      [B, token],
    ]);
    expect(w.node(A)).toMatchObject({ power: 'on', hsmState: 'Ready', booted: { kernel: 'k', token } });
    expect(w.power.transitions.get(id)!.transitionStatus).toBe('completed');
    expect(w.power.transitions.get(id)!.tasks.every((t) => t.taskStatus === 'succeeded')).toBe(true);
    expect(w.counters.transitionCount('On', A)).toBe(1);
    expect(w.counters.transitionCount('On')).toBe(2);
    expect(w.counters.transitionCount('Soft-Off')).toBe(0);
  });

  it('re-enables CFS from the node (cfs-state-reporter) after boot', async () => {
    const w = make();
    w.cfs.patch(A, { enabled: false, desired_config: 'compute-cfg', state: [] });
    w.transition('On', [A]);
    await w.waitFor('cfs-enabled', (e) => e.id === A, 2000);
    expect(w.cfs.components.get(A)!.enabled).toBe(true);
  });

  it('retries a refused report with capped backoff until it is accepted', async () => {
    let calls = 0;
    const w = make({
      reportRetryBaseMs: 1,
      reportRetryMaxMs: 3,
      onReport: async () => {
        calls++;
        if (calls < 4) throw Object.assign(new Error('409 Conflict'), { status: 409 });
      },
    });
    w.setBootParameters({ hosts: [A], kernel: 'k', initrd: 'i', params: 'p' });
    const errors: number[] = [];
    w.on('report-error', (e) => errors.push(e.attempt));
    w.transition('On', [A]);
    await w.waitFor('report', (r) => r.id === A, 2000);
    expect(calls).toBe(4);
    expect(errors).toEqual([1, 2, 3]);
  });

  it('Soft-Off powers off an obedient node and drops its booted state', async () => {
    const w = make({ initial: { booted: true } });
    w.transition('Soft-Off', [A]);
    const e = await w.waitFor('power', (p) => p.id === A, 2000);
    expect(e).toMatchObject({ state: 'off', operation: 'Soft-Off' });
    expect(w.node(A)).toMatchObject({ power: 'off', hsmState: 'Off' });
    expect(w.node(A)!.booted).toBeUndefined();
  });

  it('a node that ignores Soft-Off stays on (task fails) until Force-Off', async () => {
    const w = make({ initial: { power: 'on' }, faults: { nodes: { ignoresSoftOff: [A] } } });
    const t = w.transition('Soft-Off', [A, B]);
    const failed = await w.waitFor('power-failed', (p) => p.id === A, 2000);
    expect(failed.error).toBe('Timeout waiting for transition, soft-off.');
    await w.waitUntil(() => w.node(B)!.power === 'off', 2000);
    expect(w.node(A)!.power).toBe('on');
    expect(
      w.power.transitions
        .get(t)!
        .tasks.map((k) => k.taskStatus)
        .sort(),
    ).toEqual(['failed', 'succeeded']);
    w.transition('Force-Off', [A]);
    await w.waitUntil(() => w.node(A)!.power === 'off', 2000);
    expect(w.counters.transitionCount('Force-Off', A)).toBe(1);
    expect(w.counters.transitionCount('Force-Off', B)).toBe(0);
  });

  it('a node that never powers on stays off and its task fails', async () => {
    const w = make({ faults: { nodes: { neverPowersOn: [A] } } });
    w.transition('On', [A, B]);
    const f = await w.waitFor('power-failed', (p) => p.id === A, 2000);
    expect(f.error).toBe('Timeout waiting for transition, on.');
    await w.waitUntil(() => w.node(B)!.power === 'on', 2000);
    expect(w.node(A)!.power).toBe('off');
  });

  it('a node already in the target state succeeds at once without a power change', async () => {
    const w = make({ initial: { power: 'on' } });
    let changes = 0;
    w.on('power', () => changes++);
    const t = w.transition('On', [A]);
    expect(w.power.transitions.get(t)!.tasks[0]).toMatchObject({
      taskStatus: 'succeeded',
      taskStatusDescription: 'Component already in desired state',
    });
    expect(changes).toBe(0);
  });

  it('an unknown xname gets a failed task, not an error', () => {
    const w = make();
    const t = w.transition('On', ['x9999c0s0b0n0']);
    expect(w.power.transitions.get(t)!.tasks[0]).toMatchObject({ taskStatus: 'failed', error: 'Component not found in component map.' });
    expect(w.power.transitions.get(t)!.transitionStatus).toBe('completed');
  });

  it('a newer transition supersedes a pending one on the same node', async () => {
    const w = make({ initial: { power: 'on' }, powerOffDelayMs: 50, forceOffDelayMs: 1 });
    const soft = w.transition('Soft-Off', [A]);
    w.transition('Force-Off', [A]);
    await w.waitUntil(() => w.node(A)!.power === 'off', 2000);
    expect(w.power.transitions.get(soft)!.tasks[0]!.error).toMatch(/superseded/);
  });

  it('powering off mid-boot cancels the boot and its report', async () => {
    const reports: string[] = [];
    const w = make({ bootDelayMs: 30, forceOffDelayMs: 0, onReport: (id) => void reports.push(id) });
    w.setBootParameters({ hosts: [A], kernel: 'k', initrd: 'i', params: 'p' });
    w.transition('On', [A]);
    await w.waitFor('power', (p) => p.id === A && p.state === 'on', 2000);
    w.transition('Force-Off', [A]);
    await w.waitFor('power', (p) => p.id === A && p.state === 'off', 2000);
    // Another node's full boot takes longer than A's boot delay would have.
    w.setBootParameters({ hosts: [B], kernel: 'k', initrd: 'i', params: 'p' });
    w.transition('On', [B]);
    await w.waitFor('report', (r) => r.id === B, 2000);
    expect(reports).toEqual([B]);
  });

  it('close() clears every timer', () => {
    const w = make({ powerOnDelayMs: 10_000 });
    w.transition('On', w.ids());
    expect(w.timers.pending).toBeGreaterThan(0);
    w.close();
    expect(w.timers.pending).toBe(0);
    w.transition('On', [A]);
    expect(w.timers.pending).toBe(0);
  });
});
