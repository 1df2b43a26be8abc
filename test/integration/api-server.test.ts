/**
 * The server around the schema: /healthz, /metrics, query depth / alias / body limits, graphql-ws on
 * the same port, options, version, a replaceable identity, and internal errors kept out of answers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { errorOf, startHarness, type Harness } from './api-harness.ts';
import { startApiServer } from '../../src/api/server.ts';

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness({ queueHealthy: async () => true, limits: { maxDepth: 6, maxAliases: 3 }, maxBodyBytes: 64 * 1024 });
  base = h.server.url.replace(/\/graphql$/, '');
});
afterAll(async () => {
  await h?.close();
});

describe('HTTP endpoints', () => {
  test('GET /healthz answers BOS-style JSON', async () => {
    const r = await fetch(`${base}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ apiStatus: 'ok', dbStatus: 'ok', queueStatus: 'ok' });
    expect((await h.ok(`{ health { api database queue } }`)).health).toEqual({ api: 'OK', database: 'OK', queue: 'OK' });
  });

  test('GET /metrics serves the prom-client registry, including API operation counts, to a viewer or above', async () => {
    await h.ok(`{ version { version } }`);
    const r = await fetch(`${base}/metrics`, { headers: h.auth.bearer(await h.auth.token('viewer')) });
    expect(r.status).toBe(200);
    expect(await r.text()).toMatch(/bootorch_api_operations_total\{type="query",field="version",outcome="ok"\} \d+/);
  });

  test('version', async () => {
    expect((await h.ok(`{ version { version major minor patch } }`)).version).toEqual({ version: '0.1.0', major: 0, minor: 1, patch: 0 });
  });
});

describe('limits', () => {
  test('nesting beyond maxDepth and too many aliases are refused before anything runs', async () => {
    // The deepest path in the schema is 6 levels; this server allows 6.
    const six = await h.gql(`{ components { edges { node { desiredState { bootArtifacts { kernel } } } } } }`);
    expect(six.errors).toBeUndefined();
    const aliases = await h.gql(`{ a: version { version } b: version { version } c: version { version } d: version { version } }`);
    expect(errorOf(aliases)).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', message: 'query uses more than 3 aliases (4)' });
    h.scheduler.clear();
    const shallow = await startApiServer({
      db: h.db.db,
      scheduler: h.scheduler,
      port: 0,
      host: '127.0.0.1',
      limits: { maxDepth: 3 },
      auth: h.auth.auth,
    });
    try {
      const r = await fetch(shallow.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
        body: JSON.stringify({
          query: `fragment F on ComponentEdge { node { id } } mutation { a: putComponent(id: "x5c0s0b0n0", input: {}) { id } components { edges { ...F } } }`,
        }),
      });
      const body = (await r.json()) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
      expect(body.errors[0]!.message).toMatch(/nested 4 levels deep; at most 3/);
      const none = await h.db.db.execute(sql`select count(*)::int as n from components where id = 'x5c0s0b0n0'`);
      expect(none.rows[0]).toEqual({ n: 0 });
    } finally {
      await shallow.close();
    }
  });

  test('request bodies over maxBodyBytes are refused with 413', async () => {
    const r = await fetch(h.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
      body: JSON.stringify({ query: `{ version { version } }`, variables: { pad: 'x'.repeat(70 * 1024) } }),
    });
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  });
});

describe('graphql-ws on the same port and path', () => {
  test('a WebSocket client with a credential can run operations', async () => {
    const client = createClient({
      url: h.server.wsUrl,
      webSocketImpl: WebSocket,
      lazy: true,
      retryAttempts: 0,
      connectionParams: h.auth.bearer(h.auth.adminToken),
    });
    try {
      const results: unknown[] = [];
      for await (const r of client.iterate({ query: '{ version { version } health { database } }' })) results.push(r);
      expect(results).toEqual([{ data: { version: { version: '0.1.0' }, health: { database: 'OK' } } }]);
      const limited = async () => {
        for await (const _ of client.iterate({
          query: '{ a: version { version } b: version { version } c: version { version } d: version { version } }',
        })) {
          /* refused */
        }
      };
      // graphql-ws rejects with the validation errors themselves.
      const refused = await limited().then(
        () => 'ran',
        (e: unknown) => e,
      );
      expect(JSON.stringify(refused)).toMatch(/query uses more than 3 aliases/);
      expect(JSON.stringify(refused)).toMatch(/GRAPHQL_VALIDATION_FAILED/);
    } finally {
      await client.dispose();
    }
  });
});

describe('options', () => {
  test('defaults, patch, and range errors named by field', async () => {
    const o = (
      await h.ok(
        `{ options { defaultRetryPolicy cleanupCompletedSessionTtl maxComponentBatchSize loggingLevel transitPollingFrequency
          jobRetryDelay jobRetryBackoff jobRetryMaxDelay } }`,
      )
    ).options;
    expect(o).toEqual({
      defaultRetryPolicy: 3,
      cleanupCompletedSessionTtl: '7d',
      maxComponentBatchSize: 2800,
      loggingLevel: 'INFO',
      transitPollingFrequency: 1,
      jobRetryDelay: 1,
      jobRetryBackoff: true,
      jobRetryMaxDelay: 5,
    });
    const p = await h.ok(
      `mutation { patchOptions(patch: { defaultRetryPolicy: 5, componentActualStateTtl: "2h", loggingLevel: "debug", jobRetryDelay: 2,
        jobRetryBackoff: false }) { defaultRetryPolicy componentActualStateTtl loggingLevel pollingFrequency jobRetryDelay jobRetryBackoff jobRetryMaxDelay } }`,
    );
    expect(p.patchOptions).toEqual({
      defaultRetryPolicy: 5,
      componentActualStateTtl: '2h',
      loggingLevel: 'debug',
      pollingFrequency: 15,
      jobRetryDelay: 2,
      jobRetryBackoff: false,
      jobRetryMaxDelay: 5,
    });
    for (const [patch, field] of [
      ['{ bssReadTimeout: 5 }', 'patch.bssReadTimeout'],
      ['{ componentActualStateTtl: "30m" }', 'patch.componentActualStateTtl'],
      ['{ cleanupCompletedSessionTtl: "7 days" }', 'patch.cleanupCompletedSessionTtl'],
      ['{ maxComponentBatchSize: 131072 }', 'patch.maxComponentBatchSize'],
      ['{ loggingLevel: "LOUD" }', 'patch.loggingLevel'],
      ['{ transitPollingFrequency: 0.1 }', 'patch.transitPollingFrequency'],
      ['{ jobRetryDelay: 0 }', 'patch.jobRetryDelay'],
      ['{ jobRetryMaxDelay: 86401 }', 'patch.jobRetryMaxDelay'],
    ]) {
      expect(errorOf(await h.gql(`mutation { patchOptions(patch: ${patch}) { defaultRetryPolicy } }`))).toMatchObject({
        code: 'BAD_USER_INPUT',
        field,
      });
    }
    expect((await h.ok(`{ options { defaultRetryPolicy } }`)).options.defaultRetryPolicy).toBe(5);
    const stored = await h.db.db.execute(sql`select data from options where id = 1`);
    expect((stored.rows[0] as { data: Record<string, unknown> }).data).toMatchObject({
      default_retry_policy: 5,
      component_actual_state_ttl: '2h',
      job_retry_delay: 2,
      job_retry_backoff: false,
    });
  });
});

describe('identity and errors', () => {
  test('identify replaces the authenticator', async () => {
    const s = await startApiServer({
      db: h.db.db,
      scheduler: h.scheduler,
      port: 0,
      host: '127.0.0.1',
      identify: ({ headers }) => ({
        actor: `token:${headers.authorization ?? 'none'}`,
        tenant: null,
        auth: { principal: { subject: 'custom', role: 'operator', tenant: null, via: 'jwt' } },
      }),
    });
    try {
      await fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'abc' },
        body: JSON.stringify({ query: `mutation { putComponent(id: "x1c0s0b0n0", input: {}) { id } }` }),
      });
      const ev = await h.db.db.execute(sql`select actor from component_events where component_id = 'x1c0s0b0n0'`);
      expect(ev.rows).toEqual([{ actor: 'token:abc' }]);
    } finally {
      await s.close();
    }
  });

  test('unexpected failures answer INTERNAL_SERVER_ERROR without the detail', async () => {
    await h.db.db.execute(sql`alter table session_templates rename to session_templates_gone`);
    try {
      const r = await h.gql(`{ sessionTemplates { name } }`);
      expect(r.errors![0]).toMatchObject({ message: 'internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
      expect(JSON.stringify(r)).not.toMatch(/session_templates/);
    } finally {
      await h.db.db.execute(sql`alter table session_templates_gone rename to session_templates`);
    }
  });
});
