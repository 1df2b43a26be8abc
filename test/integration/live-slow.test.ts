/**
 * A subscriber that stops reading its socket (its TCP socket paused: real backpressure, no mock) hurts
 * only itself: the others in its group get every event as they come, its queue stays bounded, it falls
 * back to the log, and once it reads again it receives every event exactly once, in order.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { collect, startLiveServer, untilState, wsClient, type LiveServer } from '../helpers/live.ts';
import { appendEvents, type NewEvent } from '../../src/db/events.ts';

const MAX_QUEUE = 3000;
let h: LiveServer;
beforeAll(async () => {
  h = await startLiveServer({ liveOptions: { windowMs: 20, maxBatch: 500, maxQueue: MAX_QUEUE } });
});
afterAll(async () => {
  await h.close();
});

const BATCHES = 'subscription { componentEventBatches(filter: { session: "slow" }) { cursor events { cursor componentId error } } }';
// Big events, so that a few rounds fill the kernel's socket buffers between server and stalled client.
const PADDING = 'x'.repeat(2000);
let seq = 0;
const round = (n: number): NewEvent[] =>
  Array.from({ length: n }, () => ({
    componentId: `x1c0s0b0n${seq % 2}`,
    session: 'slow',
    kind: 'error',
    actor: 'test',
    error: `${++seq} ${PADDING}`,
  }));
const flat = (batches: any[]) => batches.flatMap((b) => b.events.map((e: any) => Number(e.cursor)));

test('a stalled reader falls back to the log without delaying the others, then gets every event once, in order', async () => {
  const sockets: WebSocket[] = [];
  class Tracked extends WebSocket {
    constructor(...a: ConstructorParameters<typeof WebSocket>) {
      super(...a);
      sockets.push(this);
    }
  }
  const stalledClient = createClient({
    url: h.server.wsUrl,
    webSocketImpl: Tracked,
    lazy: true,
    retryAttempts: 0,
    connectionParams: h.creds,
  });
  const fastClient = wsClient(h.server.wsUrl, h.creds);
  try {
    const stalled = collect(stalledClient, BATCHES);
    const fast = collect(fastClient, BATCHES);
    await untilState(h.server.live, () => h.server.live.stats().live === 2, 'both live');
    expect(h.server.live.stats().groups).toBe(1);
    // The stalled client stops reading its socket: the kernel buffers fill, then the server's writes wait.
    (sockets[0] as unknown as { _socket: { pause(): void } })._socket.pause();
    let written = 0;
    let maxQueued = 0;
    const off = h.server.live.onState(() => {
      maxQueued = Math.max(maxQueued, h.server.live.stats().longestQueue);
    });
    for (let r = 0; r < 40 && h.server.live.stats().fellBehind === 0; r++) {
      await appendEvents(h.db.db, round(1000));
      written += 1000;
      // The reader that reads keeps up, round by round.
      await fast.until((b) => flat(b).length === written, `fast reader has round ${r}`);
    }
    off();
    expect(h.server.live.stats().fellBehind).toBe(1);
    // Bounded: no subscriber's queue ever held more than the bound.
    expect(maxQueued).toBeLessThanOrEqual(MAX_QUEUE);
    expect(maxQueued).toBeGreaterThan(0);
    expect(h.server.live.stats().queuedEvents).toBe(0);
    expect(h.server.live.stats().live).toBe(1);
    // More while it is stalled, then it reads again: everything, once, in order, from the log and then live.
    await appendEvents(h.db.db, round(700));
    written += 700;
    await fast.until((b) => flat(b).length === written, 'fast reader has everything');
    (sockets[0] as unknown as { _socket: { resume(): void } })._socket.resume();
    await stalled.until((b) => flat(b).length === written, 'stalled reader catches up', 60_000);
    await untilState(h.server.live, () => h.server.live.stats().live === 2, 'back to live');
    await appendEvents(h.db.db, round(3));
    written += 3;
    await stalled.until((b) => flat(b).length === written, 'and live again');
    const ids = flat(stalled.items);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(written);
    const log = (await h.db.pool.query(`select id::int from component_events where session = 'slow' order by id`)).rows.map((x) => x.id);
    expect(ids).toEqual(log);
    await fast.until((b) => flat(b).length === written, 'the fast one too');
    expect(flat(fast.items)).toEqual(log);
  } finally {
    await Promise.all([stalledClient.dispose(), fastClient.dispose()]);
  }
});
