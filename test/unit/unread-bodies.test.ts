/**
 * An answer to a request whose body was not read to the end closes the connection (input-bounds.ts
 * BoundedResponse): on Node's own response and on express's, which re-parents each response onto its
 * app's prototype (closeUnreadBodies). A body read to the end keeps the connection alive.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoundedResponse, closeUnreadBodies } from '../../src/api/input-bounds.ts';

/** An app that answers /ignore without reading the body and /read after reading it. */
function app(closing: boolean): express.Express {
  const a = express();
  if (closing) closeUnreadBodies(a);
  a.post('/ignore', (_req, res) => void res.status(409).json({ read: false }));
  a.post('/read', express.text({ type: () => true }), (req, res) => void res.json({ read: String(req.body).length }));
  return a;
}

/** A server of BoundedResponses: /raw answers without express and without reading; the rest is `a`'s. */
async function serve(a: express.Express): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer({ ServerResponse: BoundedResponse }, (req, res) => {
    if (req.url === '/raw') return void res.writeHead(409, { 'content-type': 'text/plain' }).end('not read');
    a(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** The head of the answer to a POST of `declared` bytes of which `send` are sent (all of them: the request ends), asking to keep the connection. */
function post(port: number, path: string, declared: number, send: number): Promise<http.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, agent, headers: { 'content-length': declared } });
    req.on('response', (res) => {
      resolve(res.headers);
      req.destroy();
      agent.destroy();
    });
    req.on('error', (e) => (e.message.includes('socket hang up') ? undefined : reject(e)));
    const body = Buffer.alloc(send, 0x61);
    if (send === declared) req.end(body);
    else req.write(body);
  });
}

let closing: { server: http.Server; port: number };
let plain: { server: http.Server; port: number };
beforeAll(async () => {
  closing = await serve(app(true));
  plain = await serve(app(false));
});
afterAll(async () => {
  for (const s of [closing, plain]) await new Promise((r) => s?.server.close(r));
});

describe('answers to bodies left unread', () => {
  it.each(['/raw', '/ignore'])('%s: a body still arriving gets Connection: close', async (path) => {
    expect((await post(closing.port, path, 1024 * 1024, 16 * 1024)).connection).toBe('close');
  });

  it('a body read to the end keeps the connection alive', async () => {
    expect((await post(closing.port, '/read', 1000, 1000)).connection).toBe('keep-alive');
  });

  it("without closeUnreadBodies, express's answer keeps the connection (the check can fail)", async () => {
    expect((await post(plain.port, '/raw', 1024 * 1024, 16 * 1024)).connection).toBe('close');
    expect((await post(plain.port, '/ignore', 1024 * 1024, 16 * 1024)).connection).toBe('keep-alive');
  });
});
