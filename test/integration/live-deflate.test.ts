/**
 * permessage-deflate on the shared path: a payload compressed once for its group, spliced after each
 * subscriber's own prefix, decodes to exactly the log's events for a client that negotiated it, and
 * goes uncompressed to one that did not; the compressed one reads far fewer bytes.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { collect, startLiveServer, untilState, type LiveServer } from '../helpers/live.ts';
import { appendEvents, type NewEvent } from '../../src/db/events.ts';

let h: LiveServer;
beforeAll(async () => {
  h = await startLiveServer({ wsDeflate: true });
});
afterAll(async () => {
  await h.close();
});

const BATCHES = 'subscription { componentEventBatches(filter: { session: "z" }) { cursor events { cursor componentId kind reason } } }';
const events = (n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    componentId: `x1c0s${i % 8}b0n0`,
    session: 'z',
    kind: 'transition',
    actor: 'test',
    reason: `r${i}`,
  }));

test('a deflated shared payload decodes to the same events as the plain one, in far fewer bytes', async () => {
  const sockets: WebSocket[] = [];
  const make = (deflate: boolean) =>
    class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { perMessageDeflate: deflate });
        sockets.push(this);
      }
    };
  const zipped = createClient({ url: h.server.wsUrl, webSocketImpl: make(true), lazy: true, retryAttempts: 0, connectionParams: h.creds });
  const plain = createClient({ url: h.server.wsUrl, webSocketImpl: make(false), lazy: true, retryAttempts: 0, connectionParams: h.creds });
  try {
    const z = collect(zipped, BATCHES);
    const p = collect(plain, BATCHES);
    await untilState(h.server.live, () => h.server.live.stats().live === 2, 'both live');
    expect(h.server.live.stats().groups).toBe(1);
    const read0 = sockets.map((s) => (s as any)._socket.bytesRead as number);
    await appendEvents(h.db.db, events(3000));
    for (const x of [z, p]) await x.until((b) => b.reduce((n, m) => n + m.events.length, 0) === 3000, 'all events');
    expect(z.items).toEqual(p.items);
    expect(z.items.flatMap((b) => b.events.map((e: any) => e.reason))).toEqual(events(3000).map((e) => e.reason));
    expect(sockets[0]!.extensions).toMatch(/permessage-deflate/);
    expect(sockets[1]!.extensions).toBe('');
    const [zBytes, pBytes] = sockets.map((s, i) => (s as any)._socket.bytesRead - read0[i]!);
    expect(zBytes).toBeLessThan(pBytes! / 3);
  } finally {
    await Promise.all([zipped.dispose(), plain.dispose()]);
  }
});
