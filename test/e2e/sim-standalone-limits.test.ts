/**
 * /boot/v1's rate limits at their defaults (src/api/boot/limits.ts, the middleware as the API mounts
 * it, over real HTTP) against a PXE storm and a flood, on the storm's own clock (not timed: each
 * request carries the moment it is made, so the buckets see 10 seconds whatever this machine takes).
 * A storm of 10,000 nodes, one source each (a relay's X-Forwarded-For, trusted), asking for their boot
 * scripts evenly over 10 s, each then trading its ticket and fetching its config drive at once (30,000
 * requests): none is refused (against the earlier overall default, 2,000/s and burst 10,000, the same
 * storm was refused near its end: 2026-12-03, this test with that shape). A flood of 200 requests from one source in
 * one instant: its burst (40) passes, the rest are 429 with Retry-After, and other sources still pass.
 * The storm (30,000 requests, minutes on a loaded machine) runs only with BOOTORCH_STORM_TESTS=1 (.ci/run
 * sets it); the flood always.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootLimits, type BootLimitOptions } from '../../src/api/boot/limits.ts';

const NODES = 10_000;
const STORM_MS = 10_000;

interface Door {
  url: string;
  agent: http.Agent;
  close(): Promise<void>;
}

/** An app with the boot limits in front of three routes that answer 200, its clock set by each request's x-at header. */
async function door(limits: Omit<BootLimitOptions, 'now' | 'trustProxy'>): Promise<Door> {
  let at = 0;
  const app = express();
  // The middleware reads the clock synchronously in the request's own turn: each request sees its moment.
  app.use((req, _res, next) => {
    at = Number(req.get('x-at'));
    next();
  });
  app.use(bootLimits({ ...limits, trustProxy: 'loopback', now: () => new Date(at) }, () => true));
  app.get('/bootscript', (_req, res) => void res.type('text/plain').send('#!ipxe\n'));
  app.post('/exchange', (_req, res) => void res.type('text/plain').send('bto_x\n'));
  app.get('/config-drive/:x', (_req, res) => void res.type('application/octet-stream').send(Buffer.alloc(16)));
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    agent,
    close: () =>
      new Promise<void>((r) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function call(d: Door, method: string, path: string, from: string, at: number): Promise<{ status: number; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${d.url}${path}`,
      { method, agent: d.agent, headers: { 'x-forwarded-for': from, 'x-at': String(at) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** 10,000 nodes over 10 s (node k at k ms), each: boot script, exchange, config drive. Statuses counted. */
async function storm(d: Door, t0: number): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  const node = async (k: number) => {
    const from = `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`;
    const at = t0 + (k * STORM_MS) / NODES;
    for (const [method, path] of [
      ['GET', `/bootscript?mac=02:b0:07:00:00:${(k & 255).toString(16)}`],
      ['POST', '/exchange'],
      ['GET', `/config-drive/n${k}`],
    ] as const) {
      const r = await call(d, method, path, from, at);
      counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
    }
  };
  // Sixty-four nodes at a time, in their order (within a group the clock differs by 64 ms at most).
  for (let k = 0; k < NODES; k += 64) await Promise.all(Array.from({ length: Math.min(64, NODES - k) }, (_, j) => node(k + j)));
  return counts;
}

describe('/boot/v1 rate limits: a PXE storm passes, a flood from one source does not', { timeout: 300_000 }, () => {
  let defaults: Door;
  beforeAll(async () => {
    defaults = await door({});
  });
  afterAll(async () => {
    await defaults?.close();
  });

  it.runIf(process.env.BOOTORCH_STORM_TESTS === '1')(
    'lets 10,000 nodes from 10,000 sources fetch scripts in 10 s, exchange tickets and fetch config drives: none refused',
    async () => {
      const counts = await storm(defaults, 1_000_000);
      expect(Object.fromEntries(counts)).toEqual({ 200: 3 * NODES });
    },
  );

  it('refuses a flood from one source past its burst with 429 and Retry-After; another source still passes', async () => {
    const t = 50_000_000;
    const flood = await Promise.all(
      Array.from({ length: 200 }, () => call(defaults, 'GET', '/bootscript?mac=02:b0:07:00:00:01', '10.200.0.1', t)),
    );
    const refused = flood.filter((r) => r.status === 429);
    expect(flood.filter((r) => r.status === 200)).toHaveLength(40);
    expect(refused).toHaveLength(160);
    for (const r of refused) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await call(defaults, 'GET', '/bootscript?mac=02:b0:07:00:00:02', '10.200.0.2', t)).status).toBe(200);
  });
});
