/** `bootorch sim`'s pieces: where nodes find their credentials, `--fault` specs, and the /sim/* routes. */
import { mkdtempSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportTokenSource } from '../../src/sim/report-tokens.ts';
import { parseFault } from '../../src/cli/sim.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { SimWorld } from '../../src/sim/world.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'bootorch-sim-'));
const call = (src: ReturnType<typeof reportTokenSource>, x: string) => (typeof src === 'function' ? src(x) : src);

describe('report token sources', () => {
  it('one token for all, from the option or a file', () => {
    expect(call(reportTokenSource({ token: ' t1 ' }), 'x1000c0s0b0n0')).toBe('t1');
    const f = path.join(dir, 'one');
    writeFileSync(f, 'bto_shared\n');
    expect(call(reportTokenSource({ file: f }), 'x1000c0s0b0n1')).toBe('bto_shared');
    expect(reportTokenSource({})).toBeUndefined();
    expect(() => reportTokenSource({ token: 'a', dir })).toThrow(/not several/);
  });

  it('a JSON map, re-read when the file changes (looked at every 100 ms at most)', () => {
    const f = path.join(dir, 'map.json');
    writeFileSync(f, JSON.stringify({ x1000c0s0b0n0: 'a' }));
    utimesSync(f, 1, 1);
    let now = 0;
    const src = reportTokenSource({ file: f, now: () => now });
    expect(call(src, 'x1000c0s0b0n0')).toBe('a');
    expect(call(src, 'x1000c0s0b0n1')).toBeUndefined();
    writeFileSync(f, JSON.stringify({ x1000c0s0b0n0: 'b', x1000c0s0b0n1: 'c' }));
    utimesSync(f, 2, 2);
    now = 99;
    expect(call(src, 'x1000c0s0b0n0')).toBe('a');
    now = 100;
    expect(call(src, 'x1000c0s0b0n0')).toBe('b');
    expect(call(src, 'x1000c0s0b0n1')).toBe('c');
  });

  it('a directory of files named by xname, read at report time (it may appear later)', () => {
    const d = path.join(dir, 'tokens');
    const src = reportTokenSource({ dir: d });
    expect(call(src, 'x1000c0s0b0n0')).toBeUndefined();
    mkdirSync(d);
    writeFileSync(path.join(d, 'x1000c0s0b0n0'), 'bto_n0\n');
    expect(call(src, 'x1000c0s0b0n0')).toBe('bto_n0');
    expect(call(src, '../one')).toBeUndefined();
  });
});

describe('--fault specs', () => {
  it('node faults by rate or by xnames, service faults by knob', () => {
    let f = parseFault('neverPowersOn=0.25');
    f = parseFault('ignoresSoftOff=x1000c0s0b0n0,x1000c0s0b0n1', f);
    f = parseFault('pcs:down', f);
    f = parseFault('cfs:failRate=0.5', f);
    f = parseFault('hsm:slowMs=300', f);
    expect(f).toEqual({
      rates: { neverPowersOn: 0.25 },
      nodes: { ignoresSoftOff: ['x1000c0s0b0n0', 'x1000c0s0b0n1'] },
      services: { pcs: { down: true }, cfs: { failRate: 0.5 }, hsm: { slowMs: 300 } },
    });
    expect(() => parseFault('nosuch=1')).toThrow(/want/);
    expect(() => parseFault('xyz:down')).toThrow(/unknown service/);
    expect(() => parseFault('cfs:failRate=2')).toThrow(/fraction/);
  });

  it('parses how the BMC faults behave', () => {
    let f = parseFault('bmcBusy=0.01');
    f = parseFault('bmc:busyStatus=429', f);
    f = parseFault('bmc:retryAfter=2', f);
    f = parseFault('bmc:slowMs=10000', f);
    expect(f).toMatchObject({ rates: { bmcBusy: 0.01 }, bmc: { busyStatus: 429, retryAfter: 2, slowMs: 10_000 } });
    expect(() => parseFault('bmc:busyStatus=500')).toThrow(/429 or 503/);
  });
});

describe('/sim/* routes', () => {
  let world: SimWorld;
  let server: SimServer;
  beforeAll(async () => {
    world = new SimWorld({ nodes: 4 });
    server = await startSimServer(world);
  });
  afterAll(async () => {
    await server.close();
    world.close();
  });
  const post = (body: string) => fetch(`${server.url}/sim/faults`, { method: 'POST', body });

  it('info, health and counters, without counting themselves as service calls', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ ok: true });
    const info = await (await fetch(`${server.url}/sim/info`)).json();
    expect(info).toMatchObject({ nodes: 4, seed: 1, defaultImage: { manifest: world.defaultImage.manifest } });
    world.transition('Soft-Off', ['x1000c0s0b0n0']);
    const c = await (await fetch(`${server.url}/sim/counters`)).json();
    expect(c.transitions['Soft-Off']).toEqual({ x1000c0s0b0n0: 1 });
    expect(c.calls).toEqual({});
    expect(c.reports).toEqual({ delivered: 0, refused: 0 });
  });

  it('faults flipped over HTTP reach the services; bad bodies are refused', async () => {
    const r = await post(JSON.stringify({ services: { pcs: { down: true } }, nodes: { neverPowersOn: ['x1000c0s0b0n1'] } }));
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ services: { pcs: { down: true } }, nodes: { neverPowersOn: ['x1000c0s0b0n1'] } });
    expect((await fetch(`${server.url}/power-control/v1/power-status`)).status).toBe(503);
    expect((await post('{"clear": true}')).status).toBe(200);
    expect((await fetch(`${server.url}/power-control/v1/power-status`)).status).toBe(200);
    expect(world.faults.nodesWith('neverPowersOn')).toEqual([]);
    expect((await post('{"services": {"pcs": {"dwn": true}}}')).status).toBe(400);
    expect((await post('not json')).status).toBe(400);
    expect((await fetch(`${server.url}/sim/nothing`)).status).toBe(404);
  });
});
