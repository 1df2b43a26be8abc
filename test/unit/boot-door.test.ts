/**
 * The boot door's refusals (src/api/boot/limits.ts bootDoor) over real HTTP: a refusal is held before
 * it is sent, so a client asking again as soon as it is answered asks once per hold per connection;
 * held refusals are bounded per source (past that, sent at once, closing the connection); a client
 * that goes away frees its place.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { bootDoor, HELD_PER_SOURCE, type BootLimitOptions } from '../../src/api/boot/limits.ts';

interface Answer {
  status: number;
  ms: number;
  connection?: string;
  retryAfter?: string;
}

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server whose every request passes the door first (as the API's listener does), else answers 200. */
async function serve(o: BootLimitOptions): Promise<string> {
  const door = bootDoor({ trustProxy: 'loopback', ...o }, () => true);
  server = http.createServer((req, res) => {
    if (!door(req, res, '/bootscript')) res.writeHead(200, { 'content-type': 'text/plain' }).end('#!ipxe\n');
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/boot/v1/bootscript?mac=02:00:00:00:00:01`;
}

function get(url: string, from: string, agent: http.Agent | false = false, signal?: AbortSignal): Promise<Answer> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { 'x-forwarded-for': from }, signal }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t,
          connection: res.headers.connection,
          retryAfter: res.headers['retry-after'],
        }),
      );
    });
    req.on('error', reject);
  });
}

describe('the boot door holds its refusals', () => {
  it('sends a refusal only after holdMs, with Retry-After; a request within the limit is not held', async () => {
    const url = await serve({ perSource: { burst: 1, perSecond: 0.001 }, holdMs: 400 });
    const first = await get(url, '10.0.0.1');
    expect(first.status).toBe(200);
    expect(first.ms).toBeLessThan(300);
    const second = await get(url, '10.0.0.1');
    expect(second.status).toBe(429);
    expect(Number(second.retryAfter)).toBeGreaterThan(0);
    expect(second.ms).toBeGreaterThanOrEqual(390);
    // Another source is not held back by the first one's refusals.
    expect((await get(url, '10.0.0.2')).status).toBe(200);
  });

  it(`holds at most ${HELD_PER_SOURCE} refusals per source; past them a refusal is sent at once and closes its connection`, async () => {
    const url = await serve({ perSource: { burst: 1, perSecond: 0.001 }, holdMs: 1500 });
    expect((await get(url, '10.0.1.1')).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: HELD_PER_SOURCE + 4 }, () => get(url, '10.0.1.1')));
    expect(answers.every((a) => a.status === 429)).toBe(true);
    const atOnce = answers.filter((a) => a.ms < 1000);
    expect(atOnce).toHaveLength(4);
    expect(atOnce.every((a) => a.connection === 'close')).toBe(true);
    expect(answers.filter((a) => a.ms >= 1400)).toHaveLength(HELD_PER_SOURCE);
  });

  it('frees a held place when its client goes away', async () => {
    const url = await serve({ perSource: { burst: 1, perSecond: 0.001 }, holdMs: 1500 });
    expect((await get(url, '10.0.2.1')).status).toBe(200);
    const gone = new AbortController();
    const leaving = Array.from({ length: HELD_PER_SOURCE }, () => get(url, '10.0.2.1', false, gone.signal).catch(() => undefined));
    await new Promise((r) => setTimeout(r, 200));
    gone.abort();
    await Promise.all(leaving);
    await new Promise((r) => setTimeout(r, 100));
    // Every place is free again: the next refusal is held, not sent at once.
    const next = await get(url, '10.0.2.1');
    expect(next.status).toBe(429);
    expect(next.ms).toBeGreaterThanOrEqual(1400);
  });

  it('turns a flood over kept-alive connections into about one request per hold per connection', async () => {
    const url = await serve({ perSource: { burst: 5, perSecond: 0.001 }, holdMs: 250 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    let asked = 0;
    const until = performance.now() + 2000;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (performance.now() < until) {
          await get(url, '10.0.3.1', agent);
          asked++;
        }
      }),
    );
    agent.destroy();
    // 4 connections × 2 s / 0.25 s = 32, plus the burst's 5 answered at once: without the hold, thousands.
    expect(asked).toBeGreaterThan(20);
    expect(asked).toBeLessThanOrEqual(5 + 4 * 9);
  });

  it('sends at once with holdMs 0', async () => {
    const url = await serve({ perSource: { burst: 1, perSecond: 0.001 }, holdMs: 0 });
    await get(url, '10.0.4.1');
    const refused = await get(url, '10.0.4.1');
    expect(refused.status).toBe(429);
    expect(refused.ms).toBeLessThan(300);
  });
});
