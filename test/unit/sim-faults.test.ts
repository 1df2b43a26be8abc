import { afterEach, describe, expect, it } from 'vitest';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import { ServiceError } from '../../src/adapters/errors.ts';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';

const worlds: SimWorld[] = [];
const make = (o: WorldOptions = {}) => {
  const w = new SimWorld({ nodes: 8, ...o });
  worlds.push(w);
  return { w, a: createSimAdapters(w) };
};
afterEach(() => worlds.splice(0).forEach((w) => w.close()));
const A = 'x1000c0s0b0n0';
const B = 'x1000c0s0b0n1';

describe('sim faults: nodes', () => {
  it('bootsButNeverReports: boots, re-enables CFS, never reports', async () => {
    const reports: string[] = [];
    const { w } = make({ faults: { nodes: { bootsButNeverReports: [A] } }, onReport: (id) => void reports.push(id) });
    const enabled = new Set<string>();
    w.on('cfs-enabled', (e) => enabled.add(e.id));
    w.setBootParameters({ hosts: [A, B], kernel: 'k', initrd: 'i', params: 'p' });
    w.transition('On', [A, B]);
    await w.waitUntil(() => reports.includes(B) && enabled.has(A), 2000);
    expect(w.node(A)!.booted).toBeDefined();
    expect(reports).toEqual([B]);
  });

  it('reportsWrongToken: reports a stable token that BSS never handed out', async () => {
    const got = new Map<string, string>();
    const { w } = make({ faults: { nodes: { reportsWrongToken: [A] } }, onReport: (id, t) => void got.set(id, t) });
    const token = w.setBootParameters({ hosts: [A, B], kernel: 'k', initrd: 'i', params: 'p' });
    w.transition('On', [A, B]);
    await w.waitUntil(() => got.size === 2, 2000);
    expect(got.get(B)).toBe(token);
    expect(got.get(A)).not.toBe(token);
    expect(got.get(A)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('faults can be flipped at runtime', async () => {
    const { w } = make({ initial: { power: 'on' } });
    w.faults.setNodes('ignoresSoftOff', [A]);
    w.transition('Soft-Off', [A]);
    await w.waitFor('power-failed', (e) => e.id === A, 2000);
    w.faults.removeNodes('ignoresSoftOff', [A]);
    w.transition('Soft-Off', [A]);
    await w.waitUntil(() => w.node(A)!.power === 'off', 2000);
  });

  it('rate faults pick the same nodes for the same seed', () => {
    const { w: w1 } = make({ nodes: 512, seed: 3, faults: { rates: { neverPowersOn: 0.1 } } });
    const { w: w2 } = make({ nodes: 512, seed: 3, faults: { rates: { neverPowersOn: 0.1 } } });
    const pick = (w: SimWorld) => w.ids().filter((id) => w.faults.has('neverPowersOn', id));
    expect(pick(w1)).toEqual(pick(w2));
    expect(pick(w1).length).toBeGreaterThan(20);
    expect(pick(w1).length).toBeLessThan(90);
  });

  it('powerUndefined: PCS answers undefined for the node, which is unknown power (bmc_unreachable)', async () => {
    const { a } = make({ faults: { nodes: { powerUndefined: [A] } } });
    expect((await a.power.powerStatus([A])).get(A)).toMatchObject({ state: 'unknown', cause: 'bmc_unreachable' });
  });
});

describe('sim faults: services', () => {
  it('down: every call is a 503 ServiceError naming the service and endpoint', async () => {
    const { w, a } = make({ faults: { services: { pcs: { down: true } } } });
    const e = await a.power.transition('On', [A]).catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ service: 'pcs', endpoint: 'POST /transitions', status: 503 });
    expect(e.message).toMatch(/^PCS POST \/transitions failed \(HTTP 503\)/);
    expect(w.counters.transitionCount('On', A)).toBe(0);
    w.faults.setService('pcs', { down: false });
    expect(await a.power.transition('On', [A])).toHaveLength(1);
  });

  it('failRate: a seeded share of calls fail with 500', async () => {
    const { a } = make({ faults: { services: { hsm: { failRate: 0.5 } } } });
    let failed = 0;
    for (let i = 0; i < 40; i++) {
      await a.inventory.groups().catch((e) => {
        expect(e).toMatchObject({ service: 'hsm', status: 500 });
        failed++;
      });
    }
    expect(failed).toBeGreaterThan(8);
    expect(failed).toBeLessThan(32);
  });

  it('timeout: a ServiceError without status that says timeout', async () => {
    const { a } = make({ faults: { services: { cfs: { timeout: true } } } });
    const e = await a.config.getComponents([A]).catch((x) => x);
    expect(e).toMatchObject({ service: 'cfs', status: undefined, transient: true });
    expect(e.detail).toMatch(/timeout/);
  });

  it('slowMs past the read timeout is a timeout; under it the call succeeds', async () => {
    const { w, a } = make({ faults: { services: { bss: { slowMs: 30 } } } });
    expect((await a.bootParams.setBootParameters({ hosts: [A], kernel: 'k', initrd: '', params: '' })).token).toBeTruthy();
    a.configure({ timeouts: { hsm: 20, pcs: 20, bss: 0.01, cfs: 20, ims: 20 }, maxBatchSize: 0 });
    const e = await a.bootParams.setBootParameters({ hosts: [A], kernel: 'k', initrd: '', params: '' }).catch((x) => x);
    expect(e).toMatchObject({ service: 'bss', endpoint: 'PUT /boot/v1/bootparameters' });
    expect(e.detail).toMatch(/timeout/);
    expect(w.counters.callCount('bss')).toBe(2);
  });

  it('a CFS outage delays the node cfs-state-reporter until CFS is back', async () => {
    const { w } = make({ reportRetryBaseMs: 1, reportRetryMaxMs: 2, faults: { services: { cfs: { down: true } } } });
    w.cfs.patch(A, { enabled: false });
    w.transition('On', [A]);
    await w.waitFor('boot', (b) => b.id === A, 2000);
    expect(w.cfs.components.get(A)!.enabled).toBe(false);
    w.faults.setService('cfs', { down: false });
    await w.waitFor('cfs-enabled', (e) => e.id === A, 2000);
    expect(w.cfs.components.get(A)!.enabled).toBe(true);
  });
});
