/**
 * Hostile clients at the API's edge, against a real `bootorch api` process (BOOTORCH_ADAPTERS=http,
 * dev auth mode so that /console/dev-token answers, as under `npm start`): a DNS-rebinding page asking
 * for the dev token, JSON nested 2,000 deep on every REST route that takes a body (and GraphQL's
 * variables), bodies larger than the caller's limit that never finish arriving, a failed-login flood
 * from the address a valid admin also uses, and a flood of routes that need no credential.
 *
 * Raw node:http requests, so that Host, Content-Length and chunked bodies are what the test says.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { DEV_ADMIN_TOKEN, devAuthEnv } from '../helpers/auth.ts';
import { createApiToken } from '../../src/auth/index.ts';

const ANON_BURST = 40;
const OPEN_BURST = 30;
let db: TestDb;
let api: RoleProcess;
let port: number;

beforeAll(async () => {
  db = await freshDb();
  api = startRole('api', {
    ...devAuthEnv(),
    DATABASE_URL: db.url,
    PORT: '0',
    BOOTORCH_ADAPTERS: 'http',
    // Never called here: the attacks stop at the edge.
    HSM_URL: 'http://127.0.0.1:9/hsm',
    PCS_URL: 'http://127.0.0.1:9/pcs',
    BSS_URL: 'http://127.0.0.1:9/bss',
    CFS_URL: 'http://127.0.0.1:9/cfs',
    // Slow refill: what the floods see is the burst.
    BOOTORCH_RATE_LIMIT_ANON_BURST: String(ANON_BURST),
    BOOTORCH_RATE_LIMIT_ANON_PER_SECOND: '0.01',
    BOOTORCH_RATE_LIMIT_OPEN_BURST: String(OPEN_BURST),
    BOOTORCH_RATE_LIMIT_OPEN_PER_SECOND: '0.01',
  });
  port = Number((await api.waitFor(/bootorch api: http:\/\/127\.0\.0\.1:(\d+)\//))[1]);
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Whether the request's body had been sent completely when the answer's head arrived. */
  bodyEnded: boolean;
}

/**
 * One request. `body`: a string sent whole; or `{ declared, send }`: Content-Length `declared` (or
 * chunked when null) and only `send` bytes of it, the request never ended. Rejects at the deadline.
 */
function request(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | { declared: number | null; send: number },
  timeoutMs = 10_000,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false });
    const deadline = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${path}: no answer within ${timeoutMs} ms (the server is waiting for the body)`));
    }, timeoutMs);
    req.on('response', (res) => {
      const bodyEnded = ended;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        text += d;
      });
      const done = () => {
        clearTimeout(deadline);
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, text, bodyEnded });
      };
      res.on('end', done);
      res.on('error', done); // the server closed a connection whose body it would not read
    });
    req.on('error', () => {}); // EPIPE / ECONNRESET while sending a body the server refused: the answer decides
    if (typeof body === 'string') {
      req.end(body, () => {
        ended = true;
      });
    } else if (body) {
      if (body.declared !== null) req.setHeader('content-length', String(body.declared));
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      for (let sent = 0; sent < body.send; sent += chunk.length) req.write(chunk);
    } else {
      req.end(() => {
        ended = true;
      });
    }
  });
}

const json = (a: Answer) => JSON.parse(a.text) as Record<string, unknown>;
const admin = { authorization: `Bearer ${DEV_ADMIN_TOKEN}` };
const deep = (levels: number) => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`;

describe('the dev token answers only its own origin (DNS rebinding)', () => {
  test('Host or Origin naming another host, or another port, is a 403; the API origin gets the token', async () => {
    const own = await request('GET', '/console/dev-token', { host: `127.0.0.1:${port}` });
    expect(own.status).toBe(200);
    expect(json(own)).toEqual({ token: DEV_ADMIN_TOKEN });
    for (const host of [`localhost:${port}`, `[::1]:${port}`]) {
      expect((await request('GET', '/console/dev-token', { host })).status, host).toBe(200);
    }
    expect((await request('GET', '/console/dev-token', { host: `localhost:${port}`, origin: `http://localhost:${port}` })).status).toBe(
      200,
    );

    for (const headers of [
      { host: `attacker.example:${port}` } as Record<string, string>,
      { host: 'attacker.example' },
      { host: `localhost:${port + 1}` },
      { host: `127.0.0.1.attacker.example:${port}` },
      { host: `127.0.0.1:${port}`, origin: `http://attacker.example:${port}` },
      { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port + 1}` },
      { host: `127.0.0.1:${port}`, origin: 'null' },
    ]) {
      const r = await request('GET', '/console/dev-token', headers);
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(r.text).not.toContain(DEV_ADMIN_TOKEN);
    }
  });
});

/** Every REST route that takes a body, with a path that exists for it. */
const BODY_ROUTES: [string, string][] = [
  ['PATCH', '/v2/options'],
  ['PUT', '/v2/sessiontemplates/t1'],
  ['PATCH', '/v2/sessiontemplates/t1'],
  ['POST', '/v2/sessions'],
  ['PATCH', '/v2/sessions/s1'],
  ['POST', '/v2/sessions/s1/status'],
  ['PUT', '/v2/components'],
  ['PATCH', '/v2/components'],
  ['PUT', '/v2/components/x1c0s0b0n0'],
  ['PATCH', '/v2/components/x1c0s0b0n0'],
  ['POST', '/v2/applystaged'],
  ['PUT', '/apis/bos/v2/components/x1c0s0b0n0'],
];

describe('JSON nested beyond the depth limit is a 400 naming it, on every door', () => {
  test('2,000 levels (12 KB) on every REST body route, with and without a credential: 400, never 500', async () => {
    const body = deep(2000);
    expect(body.length).toBeLessThan(12 * 1024);
    for (const [method, path] of BODY_ROUTES) {
      for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/json', ...admin }]) {
        const r = await request(method, path, headers, body);
        const who = `${method} ${path} ${'authorization' in headers ? 'admin' : 'anonymous'}`;
        expect(r.status, `${who}: ${r.text}`).toBe(400);
        expect(json(r).detail, who).toMatch(/nested more than 64 levels deep/);
      }
    }
    // A body within the limit still reaches the route (here: its own 400 for an unknown option).
    const ok = await request('PATCH', '/v2/options', { 'content-type': 'application/json', ...admin }, `{"x":${deep(30)}}`);
    expect(ok.status).toBe(400);
    expect(json(ok).detail).toMatch(/Unrecognized key: "x"/);
  });

  test('GraphQL variables 2,000 deep, in a POST body and a GET query string: 400 naming the limit', async () => {
    const query = 'query($n: String!) { session(name: $n) { name } }';
    const variables = `{"n":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    for (const headers of [{}, admin]) {
      const post = await request(
        'POST',
        '/graphql',
        { 'content-type': 'application/json', ...headers },
        `{"query":${JSON.stringify(query)},"variables":${variables}}`,
      );
      expect(post.status, post.text).toBe(400);
      expect(post.text).toMatch(/nested more than 64 levels deep/);
      const get = await request('GET', `/graphql?query=${encodeURIComponent(query)}&variables=${encodeURIComponent(variables)}`, {
        'apollo-require-preflight': 'true',
        ...headers,
      });
      expect(get.status, get.text).toBe(400);
      expect(get.text).toMatch(/nested more than 64 levels deep/);
    }
  });
});

describe('bodies are bounded before they are read', () => {
  test('an anonymous 1 MiB body is refused with 413 before it arrives, on REST, GraphQL and routes that read none', async () => {
    for (const [method, path] of [
      ['PUT', '/v2/components'],
      ['PUT', '/apis/bos/v2/sessiontemplates/t1'],
      ['POST', '/graphql'],
      ['POST', '/healthz'],
      ['POST', '/boot/v1/bootscript'],
    ] as const) {
      // Content-Length says 1 MiB; 16 KiB of it is sent and the rest never is.
      const r = await request(method, path, { 'content-type': 'application/json' }, { declared: 1024 * 1024, send: 16 * 1024 });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(413);
      expect(r.bodyEnded).toBe(false);
      expect(r.text).toMatch(/262,144 bytes/);
      // And the rest is not drained either: the connection ends with the answer.
      expect(r.headers.connection).toBe('close');
    }
  });

  test('a chunked anonymous body is counted as it arrives: 413 once past the limit, though it never ends', async () => {
    for (const [method, path] of [
      ['PUT', '/v2/components'],
      ['POST', '/graphql'],
    ] as const) {
      const r = await request(method, path, { 'content-type': 'application/json' }, { declared: null, send: 1024 * 1024 });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(413);
      expect(r.bodyEnded).toBe(false);
      expect(r.headers.connection).toBe('close');
    }
  });

  test('a bad credential gets the anonymous limit; a valid one the authenticated limit', async () => {
    const bad = { authorization: `Bearer bto_${'0'.repeat(16)}_${'x'.repeat(43)}` };
    const refused = await request(
      'PUT',
      '/v2/components',
      { 'content-type': 'application/json', ...bad },
      {
        declared: 1024 * 1024,
        send: 16 * 1024,
      },
    );
    expect(refused.status, refused.text).toBe(413);
    // 300 KiB with the admin token: read and answered by the route (an unknown field), not refused for size.
    const big = `{"x":"${'y'.repeat(300 * 1024)}"}`;
    const r = await request('PATCH', '/v2/options', { 'content-type': 'application/json', ...admin }, big);
    expect(r.status, r.text.slice(0, 300)).toBe(400);
    expect(json(r).detail).toMatch(/Unrecognized key: "x"/);
  });
});

// Last: these spend the address's buckets.
describe('rate limits that do not punish the innocent', () => {
  test('after a failed-login flood from one address, a valid admin token from it passes; bad ones get 429', async () => {
    const fresh = await createApiToken(db.db, { role: 'admin', subject: 'flooded-admin' });
    const query = JSON.stringify({ query: '{ whoami { subject } }' });
    const statuses: number[] = [];
    for (let i = 0; i < ANON_BURST + 10; i++) {
      const bogus = `bto_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('base64url').slice(0, 43)}`;
      const r = await request('POST', '/graphql', { 'content-type': 'application/json', authorization: `Bearer ${bogus}` }, query);
      statuses.push(r.status);
    }
    expect(statuses.slice(-5)).toEqual(Array(5).fill(429));
    // Never seen before from this address, and the address's failed-login budget is spent.
    const good = await request('POST', '/graphql', { 'content-type': 'application/json', authorization: `Bearer ${fresh.token}` }, query);
    expect(good.status, good.text).toBe(200);
    expect(json(good)).toMatchObject({ data: { whoami: { subject: 'flooded-admin' } } });
    const rest = await request('GET', '/v2/options', { authorization: `Bearer ${fresh.token}` });
    expect(rest.status, rest.text).toBe(200);
    const again = await request('POST', '/graphql', { 'content-type': 'application/json', authorization: 'Bearer bto_nope' }, query);
    expect(again.status).toBe(429);
    expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  test('routes that need no credential are limited per address too, with Retry-After (probes get a generous burst)', async () => {
    for (const path of ['/healthz', '/assets/none.js', '/no/such/route', '/console/dev-token']) {
      const statuses: number[] = [];
      let refused: Answer | undefined;
      for (let i = 0; i < OPEN_BURST + 5 && !refused; i++) {
        const r = await request('GET', path, { host: `127.0.0.1:${port}` });
        statuses.push(r.status);
        if (r.status === 429) refused = r;
      }
      expect(refused, `${path}: ${statuses.join(',')}`).toBeDefined();
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(json(refused!)).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED' } }] });
    }
    // A WebSocket's upgrade carries no credential either (connection_init does): the same bucket.
    const upgrade = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode!));
      ws.once('open', () => {
        ws.close();
        resolve(101);
      });
      ws.once('error', reject);
    });
    expect(upgrade).toBe(429);
  });
});
