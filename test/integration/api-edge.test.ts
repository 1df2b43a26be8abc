/**
 * The API's edge against hostile requests (issue 12), over real HTTP and graphql-ws: fragment bombs
 * answered with a typed error in well under a second while /healthz stays fast, time values past
 * what a date holds, a subscription sent as an HTTP POST, persisted-query hashes, what answers without
 * a credential, and the per-address rate limit for anonymous callers and failed logins.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { errorOf, startHarness, type GqlResult, type Harness } from './api-harness.ts';
import { firstResult } from '../helpers/ws.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { buildSchema } from '../../src/api/schema.ts';
import { createContext } from '../../src/api/context.ts';
import { createRateLimiter } from '../../src/auth/index.ts';
import { chain, fanOut } from '../helpers/bombs.ts';

const gqlRuntime = createRequire(import.meta.url)('graphql') as typeof import('graphql');

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness({ queueHealthy: async () => true });
  base = h.server.url.replace(/\/graphql$/, '');
});
afterAll(async () => {
  await h?.close();
});

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<GqlResult & { ms: number; headers: Headers }> {
  const t = performance.now();
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = (await r.json()) as GqlResult;
  return { ...json, status: r.status, ms: performance.now() - t, headers: r.headers };
}

const admin = () => h.auth.bearer(h.auth.adminToken);

describe('query cost: bombs are refused in well under a second, the API stays responsive', () => {
  test('the fragment fan-out, with and without a token, over HTTP, 8 at once three times, while /healthz is probed', async () => {
    const bomb = fanOut(8, 10);
    // Warm both paths once (compilation is not what this measures).
    await post(h.server.url, { query: bomb });
    await post(h.server.url, { query: bomb }, admin());
    const probes: number[] = [];
    let flooding = true;
    const prober = (async () => {
      while (flooding) {
        const t = performance.now();
        const r = await fetch(`${base}/healthz`);
        expect(r.status).toBe(200);
        await r.arrayBuffer();
        probes.push(performance.now() - t);
      }
    })();
    const answers: Awaited<ReturnType<typeof post>>[] = [];
    for (let round = 0; round < 3; round++) {
      answers.push(...(await Promise.all(Array.from({ length: 8 }, (_, i) => post(h.server.url, { query: bomb }, i % 2 ? admin() : {})))));
    }
    flooding = false;
    await prober;
    for (const [i, a] of answers.entries()) {
      expect(a.status, JSON.stringify(a)).toBe(400);
      expect(errorOf(a)).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
      expect(a.errors![0]!.extensions).toMatchObject({ limit: i % 2 ? 'cost' : 'fragments' });
      expect(a.ms).toBeLessThan(1000);
    }
    expect(probes.length).toBeGreaterThan(0);
    expect(Math.max(...probes)).toBeLessThan(1000);
    process.stdout.write(
      `\nfragment fan-out (${bomb.length} bytes) 3 x 8 at once: slowest answer ${Math.max(...answers.map((a) => a.ms)).toFixed(1)} ms; /healthz meanwhile ${probes.length} probes, slowest ${Math.max(...probes).toFixed(1)} ms\n`,
    );
  });

  test('a chain of 4,000 fragments (146 KB) is a typed 400, with or without a token', async () => {
    const q = chain(4000);
    expect(q.length).toBeGreaterThan(146_000);
    for (const headers of [{}, admin()]) {
      const a = await post(h.server.url, { query: q }, headers);
      expect(a.status).toBe(400);
      expect(a.errors![0]!.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'tokens' });
      expect(a.ms).toBeLessThan(1000);
    }
  });

  test('over graphql-ws: without a credential the socket closes before any document; with one the bomb is a typed error', async () => {
    const anon = await firstResult(h.server.wsUrl, {}, fanOut(8, 10));
    expect(anon.closed).toMatchObject({ code: 4403 });
    const t = performance.now();
    const authed = await firstResult(h.server.wsUrl, admin(), fanOut(8, 10));
    expect(performance.now() - t).toBeLessThan(1000);
    expect(authed.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' } });
  });

  test('the worst document within the authenticated budget is answered in well under a second', async () => {
    // Found by trying: graphql's field-merging rule is quadratic in the fields a selection set collects
    // (fragments included), so the widest sets the budget allows (64) of the heaviest fields.
    const frags = Array.from({ length: 8 }, (_, i) => `fragment G${i} on Query { ${'version{version major minor patch} '.repeat(8)} }`);
    const candidates = {
      duplicates: `{ ${'version{version major minor patch} '.repeat(60)} }`,
      nested: `{ ${'components(first:1){nodes{status{phase status}}} '.repeat(64)} }`,
      fragments: `{ ${frags.map((_, i) => `...G${i}`).join(' ')} } ${frags.join(' ')}`,
      wider: `{ ${'version{version} '.repeat(495)} }`,
      fanOut: fanOut(8, 10),
    };
    const worst: string[] = [];
    for (const [name, query] of Object.entries(candidates)) {
      const a = await post(h.server.url, { query }, admin());
      expect(a.status, name).toBeLessThan(500);
      expect(a.ms, name).toBeLessThan(1000);
      worst.push(`${name} ${a.ms.toFixed(1)} ms (${a.status})`);
    }
    process.stdout.write(`\nworst documents within the authenticated budget: ${worst.join(', ')}\n`);
  });
});

describe('typed errors for every bad input found', () => {
  test('ages past what a date holds are BAD_USER_INPUT naming the field', async () => {
    for (const [doc, field] of [
      ['{ sessions(minAge: "99999999999999w") { name } }', 'minAge'],
      ['{ sessions(maxAge: "9999999999d") { name } }', 'maxAge'],
      ['mutation { deleteSessions(minAge: "99999999999999w") { names } }', 'minAge'],
      ['mutation { deleteSessions(maxAge: "9999999999d") { names } }', 'maxAge'],
      [
        'mutation { patchOptions(patch: { cleanupCompletedSessionTtl: "99999999999999w" }) { defaultRetryPolicy } }',
        'patch.cleanupCompletedSessionTtl',
      ],
      [
        'mutation { patchOptions(patch: { componentActualStateTtl: "9999999999d" }) { defaultRetryPolicy } }',
        'patch.componentActualStateTtl',
      ],
    ] as const) {
      const r = await h.gql(doc);
      expect(errorOf(r), doc).toMatchObject({ code: 'BAD_USER_INPUT', field });
    }
    expect((await h.ok('{ sessions(minAge: "36525d", maxAge: "5217w") { name } }')).sessions).toEqual([]);
  });

  test('a subscription sent over HTTP is refused, typed, and the field is never resolved unchecked', async () => {
    for (const [body, method] of [
      [{ query: 'subscription { componentEvents { cursor } }' }, 'POST'],
      [{ query: 'query Q { version { version } } subscription S { sessionProgress(name: "x") { status } }', operationName: 'S' }, 'POST'],
      [{ query: 'subscription { componentEvents { cursor } }' }, 'GET'],
    ] as const) {
      for (const headers of [admin(), h.auth.bearer(await h.auth.token('viewer'))]) {
        const r =
          method === 'POST'
            ? await post(h.server.url, body, headers)
            : await fetch(`${h.server.url}?query=${encodeURIComponent(body.query)}`, {
                headers: { ...headers, 'apollo-require-preflight': '1' },
              }).then(async (x) => ({ ...((await x.json()) as GqlResult), status: x.status }));
        expect(r.status).toBe(400);
        expect(errorOf(r)).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/graphql-ws/) });
      }
    }
    // Behind the edge, the subscription field itself refuses to resolve outside `subscribe`.
    const schema = buildSchema();
    const ctx = createContext(
      { db: h.db.db, scheduler: h.scheduler },
      { actor: 'x', tenant: null, auth: { principal: { subject: 's', role: 'admin', tenant: null, via: 'api-token' } } },
    );
    const r = await gqlRuntime.execute({
      schema,
      document: gqlRuntime.parse('subscription { componentEvents { cursor } }'),
      contextValue: ctx,
    });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST' });
  });

  test("persisted queries: a hash mismatch is a typed 400; a registered hash is checked against its caller's budget", async () => {
    const query = '{ version { version } }';
    const hash = createHash('sha256').update(query).digest('hex');
    const wrong = await post(h.server.url, { query, extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } }, admin());
    expect(wrong.status).toBe(400);
    expect(errorOf(wrong)).toMatchObject({ code: 'PERSISTED_QUERY_HASH_MISMATCH' });
    const version = await post(h.server.url, { query, extensions: { persistedQuery: { version: 2, sha256Hash: hash } } }, admin());
    expect(errorOf(version)).toMatchObject({ code: 'BAD_REQUEST' });
    const unknown = await post(h.server.url, { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } });
    expect(errorOf(unknown).code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await post(h.server.url, { query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }, admin())).data).toEqual({
      version: { version: '0.1.0' },
    });
    expect((await post(h.server.url, { extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).data).toEqual({
      version: { version: '0.1.0' },
    });
    // Registered by an admin, asked for by hash without a token: the anonymous budget applies.
    const big = `{ ${Array.from({ length: 6 }, (_, i) => `a${i}: version { version }`).join(' ')} }`;
    const bigHash = createHash('sha256').update(big).digest('hex');
    expect(
      (await post(h.server.url, { query: big, extensions: { persistedQuery: { version: 1, sha256Hash: bigHash } } }, admin())).errors,
    ).toBeUndefined();
    const anon = await post(h.server.url, { extensions: { persistedQuery: { version: 1, sha256Hash: bigHash } } });
    expect(anon.status).toBe(400);
    expect(anon.errors![0]!.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'aliases' });
  });

  test('over graphql-ws, errors are typed like over HTTP', async () => {
    const client = createClient({ url: h.server.wsUrl, webSocketImpl: WebSocket, lazy: true, retryAttempts: 0, connectionParams: admin() });
    try {
      const run = async (query: string, variables: Record<string, unknown> = {}) => {
        const out: any[] = [];
        try {
          for await (const r of client.iterate({ query, variables })) out.push(r);
        } catch (e) {
          out.push({ errors: e });
        }
        return out[0];
      };
      const ages = await run('query($a: String) { sessions(minAge: $a) { name } }', { a: '99999999999999w' });
      expect(ages.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'minAge' });
      const coercion = await run('query($s: SessionState) { sessions(status: $s) { name } }', { s: 'NOPE' });
      expect(coercion.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 's' });
      const mutation = await run('mutation { deleteSessions(minAge: "9999999999d") { names } }');
      expect(mutation.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'minAge' });
    } finally {
      await client.dispose();
    }
  });
});

describe('what answers without a credential', () => {
  test('/healthz: the three states only', async () => {
    const r = await fetch(`${base}/healthz`);
    expect(await r.json()).toEqual({ apiStatus: 'ok', dbStatus: 'ok', queueStatus: 'ok' });
  });

  test('/metrics: 401 without a credential, 403 for a node, 200 for a viewer; or on its own listen address', async () => {
    const none = await fetch(`${base}/metrics`);
    expect(none.status).toBe(401);
    expect(await none.text()).not.toMatch(/bootorch_api_operations_total/);
    expect((await fetch(`${base}/metrics`, { headers: h.auth.bearer(await h.auth.token('node', { xname: 'x1c0s0b0n0' })) })).status).toBe(
      403,
    );
    expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer nonsense' } })).status).toBe(401);
    const viewer = await fetch(`${base}/metrics`, { headers: h.auth.bearer(await h.auth.token('viewer')) });
    expect(viewer.status).toBe(200);
    expect(await viewer.text()).toMatch(/bootorch_api_refused_total/);
    const separate = await startApiServer({
      db: h.db.db,
      scheduler: h.scheduler,
      port: 0,
      host: '127.0.0.1',
      auth: h.auth.auth,
      metricsListen: { port: 0, host: '127.0.0.1' },
    });
    try {
      const m = await fetch(separate.metricsUrl!);
      expect(m.status).toBe(200);
      expect(await m.text()).toMatch(/bootorch_api_operations_total/);
      expect((await fetch(separate.url.replace(/graphql$/, 'metrics'))).status).toBe(401);
    } finally {
      await separate.close();
    }
  });

  test('GraphQL: version and health only; no introspection, no field suggestions; everything else 401', async () => {
    expect((await post(h.server.url, { query: '{ version { version } health { api } }' })).data).toEqual({
      version: { version: '0.1.0' },
      health: { api: 'OK' },
    });
    const intro = await post(h.server.url, { query: '{ __schema { queryType { name } } }' });
    expect(intro.status).toBe(401);
    expect(errorOf(intro).code).toBe('UNAUTHENTICATED');
    expect((await post(h.server.url, { query: '{ __type(name: "Session") { fields { name } } }' })).status).toBe(401);
    expect((await post(h.server.url, { query: '{ __schema { queryType { name } } }' }, admin())).data).toEqual({
      __schema: { queryType: { name: 'Query' } },
    });
    const typo = await post(h.server.url, { query: '{ version { versio } }' });
    expect(typo.status).toBe(400);
    expect(errorOf(typo).message).toMatch(/Cannot query field "versio"/);
    expect(errorOf(typo).message).not.toMatch(/Did you mean/);
    expect(errorOf(await post(h.server.url, { query: '{ version { versio } }' }, admin())).message).toMatch(/Did you mean "version"\?/);
    const closed = await post(h.server.url, { query: '{ version { version } sessions { name } }' });
    expect(closed.status).toBe(401);
    expect(closed.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', field: 'sessions' });
    const revoked = await post(
      h.server.url,
      { query: '{ sessions { name } }' },
      { authorization: `Bearer bto_${'0'.repeat(16)}_${'x'.repeat(43)}` },
    );
    expect(revoked.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'unknown-token' });
  });

  test('graphql-ws: a connection_init without a valid credential is closed 4403', async () => {
    for (const params of [
      {} as Record<string, string>,
      { authorization: 'Bearer nonsense' },
      { authorization: `Bearer bto_${'0'.repeat(16)}_${'x'.repeat(43)}` },
    ]) {
      const r = await firstResult(h.server.wsUrl, params, '{ version { version } }');
      expect(r.closed, JSON.stringify(params)).toMatchObject({
        code: 4403,
        reason: expect.stringMatching(/^Forbidden: not authenticated/),
      });
    }
  });
});

describe('rate limit for anonymous callers and failed logins', () => {
  let s: ApiServer;
  beforeAll(async () => {
    const limiter = createRateLimiter({ burst: 1000, perSecond: 1000, anonymous: { burst: 10, perSecond: 0.5 } });
    s = await startApiServer({ db: h.db.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', auth: { ...h.auth.auth, limiter } });
  });
  afterAll(async () => {
    await s?.close();
  });

  test('anonymous flooding and random tokens from one address are limited, with Retry-After; a known-good token still passes', async () => {
    // The admin token is seen valid before the flood.
    expect((await post(s.url, { query: '{ version { version } }' }, admin())).status).toBe(200);
    const statuses: number[] = [];
    const started = performance.now();
    for (let i = 0; i < 200; i++) {
      const token = `bto_${createHash('sha256').update(String(i)).digest('hex').slice(0, 16)}_${'y'.repeat(43)}`;
      const headers: Record<string, string> = i % 2 ? {} : { authorization: `Bearer ${token}` };
      const r = await post(s.url, { query: i % 2 ? '{ version { version } }' : '{ sessions { name } }' }, headers);
      statuses.push(r.status);
      if (r.status === 429) {
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(errorOf(r)).toMatchObject({
          code: 'RATE_LIMITED',
          message: expect.stringMatching(/exceeded for (failed authentications from )?address/),
        });
      }
    }
    const refused = statuses.filter((x) => x === 429).length;
    // Two buckets of 10 for the address (requests without a credential, failed authentications), and
    // what each refilled at 0.5/s while the flood ran (every bad token is looked up: it takes a while).
    const refilled = Math.ceil(2 * 0.5 * ((performance.now() - started) / 1000));
    expect(statuses.length - refused).toBeLessThanOrEqual(22 + refilled);
    expect((await post(s.url, { query: '{ sessions { name } }' }, admin())).status).toBe(200);
    // graphql-ws from the same address: its bad credential is closed 4429, its failed-login budget spent.
    const ws = await firstResult(s.wsUrl, { authorization: 'Bearer nonsense' }, '{ version { version } }');
    expect(ws.closed).toMatchObject({ code: 4429 });
    process.stdout.write(`\nanonymous flood (200 requests, half with random tokens) from one address: ${refused} refused with 429\n`);
  });
});
