/** Outages over real HTTP: the clients retry a little, then fail with a ServiceError naming the service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/adapters/errors.ts';
import { createHttpAdapters } from '../../src/adapters/http-factory.ts';
import { startRig, type Rig } from './harness.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig({ nodes: 8 }, { retries: 2, baseMs: 1, maxMs: 5 });
});
afterAll(() => rig.close());
const fast = { timeouts: { hsm: 0.2, pcs: 0.2, bss: 0.2, cfs: 0.2, ims: 0.2 }, maxBatchSize: 0 };

async function failure(p: Promise<unknown>): Promise<ServiceError> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  );
  expect(e).toBeInstanceOf(ServiceError);
  return e as ServiceError;
}

describe('HTTP clients under service faults', () => {
  it('a service that is down: 3 attempts, then 503 naming the service and endpoint', async () => {
    rig.world.faults.setService('pcs', { down: true });
    const before = rig.world.counters.callCount('pcs', 'POST /transitions');
    const e = await failure(rig.adapters.power.transition('On', [rig.world.ids()[0]!]));
    expect(e).toMatchObject({ service: 'pcs', endpoint: 'POST /transitions', status: 503, transient: true });
    expect(e.message).toMatch(/^PCS POST \/transitions failed \(HTTP 503\): PCS is unavailable/);
    expect(rig.world.counters.callCount('pcs', 'POST /transitions') - before).toBe(3);
    expect(rig.world.counters.transitionCount('On')).toBe(0);
    rig.world.faults.setService('pcs', { down: false });
  });

  it('a service answering 500: retried, and a later success wins', async () => {
    rig.world.faults.setService('cfs', { failRate: 1 });
    const e = await failure(rig.adapters.config.getComponents([rig.world.ids()[0]!]));
    expect(e).toMatchObject({ service: 'cfs', endpoint: 'GET /v3/components', status: 500, detail: 'simulated internal error' });
    // A flaky service: with retries most calls get through.
    rig.world.faults.setService('cfs', { failRate: 0.3 });
    let ok = 0;
    for (let i = 0; i < 20; i++)
      ok += await rig.adapters.config.configurationExists('compute-cfg').then(
        () => 1,
        () => 0,
      );
    expect(ok).toBeGreaterThanOrEqual(17);
    rig.world.faults.setService('cfs', { failRate: 0 });
  });

  it('a service slower than the read timeout: retried, then a timeout naming the service', async () => {
    rig.adapters.configure(fast);
    // Far beyond the 0.2 s timeout: undici times the answer's head on its coarse timers (a tick every
    // half second), so a 0.2 s timeout fires 0.5 to 1 s after the request, later on a busy machine; a
    // 1 s delay once answered first in a full `npm test`.
    rig.world.faults.setService('hsm', { slowMs: 3000 });
    const before = rig.world.counters.callCount('hsm');
    const e = await failure(rig.adapters.inventory.groups());
    expect(e).toMatchObject({ service: 'hsm', endpoint: 'GET /hsm/v2/groups', status: undefined });
    expect(e.detail).toMatch(/^timeout: no response within 0.2 s/);
    expect(rig.world.counters.callCount('hsm') - before).toBe(3);
    rig.world.faults.setService('hsm', { slowMs: 20 });
    expect((await rig.adapters.inventory.groups()).length).toBeGreaterThan(0);
    rig.world.faults.setService('hsm', { slowMs: 0 });
  });

  it('a service that never answers: timeout', async () => {
    rig.adapters.configure(fast);
    rig.world.faults.setService('bss', { timeout: true });
    const e = await failure(rig.adapters.bootParams.setBootParameters({ hosts: ['x1000c0s0b0n0'], kernel: 'k', initrd: '', params: '' }));
    expect(e).toMatchObject({ service: 'bss', endpoint: 'PUT /boot/v1/bootparameters' });
    expect(e.detail).toMatch(/timeout/);
    rig.world.faults.setService('bss', { timeout: false });
  });

  it('nothing listening: connection errors are retried, then reported', async () => {
    // A port that was free a moment ago: listen, note it, close.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const url = `http://127.0.0.1:${port}`;
    const dead = createHttpAdapters({
      hsm: { url },
      pcs: { url },
      bss: { url },
      cfs: { url },
      ims: { url },
      retry: { retries: 1, baseMs: 1, maxMs: 1 },
    });
    const e = await failure(dead.power.powerStatus(['x1000c0s0b0n0']));
    expect(e).toMatchObject({ service: 'pcs', endpoint: 'POST /power-status', transient: true });
    expect(e.detail).toMatch(/^connection failed: ECONNREFUSED/);
    await dead.close();
  });

  it('a redirect is followed, with its method and body (307), as fetch did', async () => {
    const http = await import('node:http');
    const u = rig.server.urls;
    const seen: string[] = [];
    const gw = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(307, { location: `${rig.server.url}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => gw.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(gw.address() as { port: number }).port}`;
    const a = createHttpAdapters({
      hsm: { url },
      pcs: { url: `${url}/power-control/v1` },
      bss: { url: u.bss },
      cfs: { url: u.cfs },
      ims: { url: u.s3 },
    });
    try {
      expect((await a.inventory.groups()).length).toBeGreaterThan(0);
      const id = rig.world.ids()[0]!;
      expect([...(await a.power.powerStatus([id])).keys()]).toEqual([id]);
      expect(seen).toEqual(['GET /hsm/v2/groups', 'POST /power-control/v1/power-status']);
    } finally {
      await a.close();
      await new Promise((r) => gw.close(r));
    }
  });

  it('a 4xx is not retried and not transient', async () => {
    const before = rig.world.counters.callCount('cfs', 'PATCH /v3/components');
    const e = await failure(rig.adapters.config.patchComponents(['x'], { desiredConfig: 'x'.repeat(61) }));
    expect(e).toMatchObject({ service: 'cfs', status: 400, transient: false });
    expect(rig.world.counters.callCount('cfs', 'PATCH /v3/components') - before).toBe(1);
  });

  it('a token file is re-read on every request', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'bootorch-')), 'token');
    writeFileSync(file, 'first\n');
    const u = rig.server.urls;
    const a = createHttpAdapters({
      hsm: { url: u.hsm, tokenFile: file },
      pcs: { url: u.pcs },
      bss: { url: u.bss },
      cfs: { url: u.cfs },
      ims: { url: u.s3 },
    });
    // Only this test's client sends a credential: an earlier test's slowed request, answered after its
    // client gave up, may still land in the exchanges after these.
    const lastToken = () => rig.exchanges.filter((x) => x.requestHeaders.authorization !== undefined).at(-1)?.requestHeaders.authorization;
    await a.inventory.groups();
    expect(lastToken()).toBe('Bearer first');
    writeFileSync(file, 'second');
    await a.inventory.groups();
    expect(lastToken()).toBe('Bearer second');
    await a.close();
  });
});
