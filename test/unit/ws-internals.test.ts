/**
 * live/ws-internals.ts reads ws's private parts for pre-compressed frames (deflate.ts). Against the
 * installed ws they must be where it reads them; a socket without them throws naming the part, and a
 * payload sent through them reaches a permessage-deflate client as the message it stands for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { checkWsInternals, deflateSocket } from '../../src/api/live/ws-internals.ts';
import { sendDeflated } from '../../src/api/live/deflate.ts';

let server: WebSocketServer;
let url: string;
const serverSockets: WebSocket[] = [];
beforeAll(async () => {
  server = new WebSocketServer({ port: 0, perMessageDeflate: { serverNoContextTakeover: true, clientNoContextTakeover: true } });
  server.on('connection', (s) => serverSockets.push(s));
  await new Promise((resolve) => server.once('listening', resolve));
  const a = server.address();
  url = `ws://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
afterAll(async () => {
  for (const s of server.clients) s.terminate();
  await new Promise((resolve) => server.close(resolve));
});

/** A client (with or without permessage-deflate) and the server's socket for it. */
async function connect(deflate: boolean): Promise<{ client: WebSocket; socket: WebSocket }> {
  const client = new WebSocket(url, { perMessageDeflate: deflate });
  await new Promise((resolve, reject) => client.once('open', resolve).once('error', reject));
  while (serverSockets.length === 0) await new Promise((resolve) => server.once('connection', resolve));
  return { client, socket: serverSockets.shift()! };
}

describe('ws internals', () => {
  it("are where the installed ws keeps them: Sender.frame and Sender's sendFrame", () => {
    expect(checkWsInternals()).toBeTypeOf('function');
  });

  it("a socket's negotiated parameters and idle sender are read, and a deflated payload arrives whole", async () => {
    const { client, socket } = await connect(true);
    try {
      expect(socket.extensions).toBe('permessage-deflate');
      const d = deflateSocket(socket);
      expect(d.sender._state).toBe(0);
      expect([undefined, true, 15]).toContain(d.serverMaxWindowBits);
      const got = new Promise<string>((resolve) => client.once('message', (m) => resolve(String(m))));
      let written: (e?: Error) => void = () => {};
      const done = new Promise<void>((resolve, reject) => (written = (e) => (e ? reject(e) : resolve())));
      expect(sendDeflated(socket, '{"id":"1","type":"next","payload":', Buffer.from('{"data":{"n":1}}'), (e) => written(e))).toBe(true);
      await done;
      expect(JSON.parse(await got)).toEqual({ id: '1', type: 'next', payload: { data: { n: 1 } } });
    } finally {
      client.close();
    }
  });

  it('a socket that did not negotiate permessage-deflate is left to the plain send', async () => {
    const { client, socket } = await connect(false);
    try {
      expect(sendDeflated(socket, '{"id":"1","payload":', Buffer.from('{}'), () => {})).toBe(false);
    } finally {
      client.close();
    }
  });

  it('a socket without them throws naming the part that moved', async () => {
    const { client, socket } = await connect(false);
    try {
      expect(() => deflateSocket(socket)).toThrow(/_extensions\['permessage-deflate'\]\.params.*written for ws 8\.23\.0/);
    } finally {
      client.close();
    }
  });
});
