/**
 * Node reports at wire speed, proven correct (not timed): two API replicas on one database, each with
 * its own credential cache (src/auth/token-rows.ts) and credential watch.
 * - a credential cached on one replica and revoked on the other is refused within 2 s;
 * - with the watch down nothing is trusted from the cache: a revocation is refused at once;
 * - a report through the fast path (src/api/fast-reports.ts) and through Apollo give the same
 *   answer, the same row and the same event, for accepted reports and for each kind of refusal.
 *   Apollo's path is the same server's: the fast path takes POSTs to `/graphql` exactly, so one to
 *   `/graphql?via=apollo` goes to express untouched (each comparison checks that it was not served fast).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { testAuth, type TestAuth } from '../helpers/auth.ts';
import { recordingScheduler } from './api-harness.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { createAuthenticator, createNodeToken } from '../../src/auth/index.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { REPORT_MUTATION } from '../../src/reporter/agent.ts';
import type { TokenRowCache } from '../../src/auth/token-rows.ts';
import { fastReportCounts } from '../../src/api/fast-reports.ts';

let db: TestDb;
let auth: TestAuth;
const servers: Record<'fast' | 'fastB', ApiServer> = {} as never;
const caches: Record<string, TokenRowCache> = {};
const A = 'x3000c0s19b1n0';
const B = 'x3000c0s19b1n1';
const FULL = `mutation($id: ID!, $t: String!) { reportBootState(id: $id, bssToken: $t) {
  __typename
  ... on BootStateReported { tokenKnown component { id actualState { bootArtifacts { kernel kernelParameters initrd } bssToken } } }
  ... on ReportRefused { code message } } }`;

beforeAll(async () => {
  db = await freshDb();
  auth = await testAuth(db.db);
  await db.db.execute(sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok-a', 'k', 'p', 'i')`);
  for (const name of ['fast', 'fastB'] as const) {
    // Each replica its own authenticator: its own cache, as two processes would have.
    const authenticator = await createAuthenticator({ mode: 'tokens' }, db.db);
    caches[name] = authenticator.tokenRows!;
    const scheduler = recordingScheduler();
    servers[name] = await startApiServer({
      db: db.db,
      scheduler,
      port: 0,
      host: '127.0.0.1',
      auth: { authenticator },
      reports: createReportBatcher(db.db, scheduler),
    });
  }
});
afterAll(async () => {
  for (const s of Object.values(servers)) await s?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.db.execute(sql`delete from component_events`);
  await db.db.execute(sql`delete from components`);
  await db.db.execute(
    sql`insert into components (id, actual_kernel, actual_updated_at, session) values (${A}, 'old', '2020-01-01Z', 's1'), (${B}, 'old', '2020-01-01Z', 's1')`,
  );
});

/** Where `server`'s express and Apollo answer a POST the fast path would have taken at `server.url`. */
const apollo = (server: ApiServer) => `${server.url}?via=apollo`;

async function post(server: ApiServer | string, body: unknown, token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(typeof server === 'string' ? server : server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
const report = (server: ApiServer | string, id: string, token: string, query = REPORT_MUTATION, t = 'tok-a') =>
  post(server, { query, variables: { id, t, token: t } }, token);

describe('cached credentials end on every replica', () => {
  test('a node token cached on one replica and revoked on the other is refused within 2 s', async () => {
    const token = (await createNodeToken(db.db, A)).token;
    expect((await report(servers.fastB, A, token)).body.data.reportBootState.__typename).toBe('BootStateReported');
    const hits = caches.fastB!.counts.hits;
    expect((await report(servers.fastB, A, token)).body.data.reportBootState.__typename).toBe('BootStateReported');
    expect(caches.fastB!.counts.hits).toBeGreaterThan(hits); // the second report was answered from the cache
    const id = /^bto_([0-9a-f]{16})_/.exec(token)![1]!;
    const revoked = await post(
      servers.fast,
      { query: 'mutation($id: ID!) { revokeApiToken(id: $id) }', variables: { id } },
      auth.adminToken,
    );
    expect(revoked.body).toEqual({ data: { revokeApiToken: true } });
    const t0 = Date.now();
    let r = await report(servers.fastB, A, token);
    while (r.status === 200 && Date.now() - t0 < 2000) r = await report(servers.fastB, A, token);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.status).toBe(401);
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
  });

  test('without the watch, nothing is served from the cache: a revocation is refused at once', async () => {
    const token = (await createNodeToken(db.db, B)).token;
    expect((await report(servers.fast, B, token)).status).toBe(200);
    caches.fast!.lost(); // what the watch calls when its LISTEN connection drops
    const id = /^bto_([0-9a-f]{16})_/.exec(token)![1]!;
    await db.db.execute(sql`update api_tokens set revoked_at = now() where id = ${id}`);
    caches.fast!.alive(); // a heartbeat before the NOTIFY could matter: the cache starts empty again
    const r = await report(servers.fast, B, token);
    expect(r.status).toBe(401);
  });
});

describe('the fast path answers and writes as Apollo does', () => {
  const rowOf = async (id: string) =>
    (
      await db.db.execute(sql`select phase, status, last_action, session, actual_kernel, actual_kernel_parameters, actual_initrd, actual_bss_token,
    actual_updated_at > '2020-01-02Z' as stamped from components where id = ${id}`)
    ).rows[0];
  const eventsOf = async (id: string) =>
    (
      await db.db.execute(sql`select kind, actor, session, from_phase, to_phase, from_status, to_status, reason, data
    from component_events where component_id = ${id} order by id`)
    ).rows;
  const same = (a: unknown, from: string, to: string) => JSON.parse(JSON.stringify(a).replaceAll(from, to));

  test('an accepted report: same answer, same row, same event', async () => {
    const ta = (await createNodeToken(db.db, A)).token;
    const tb = (await createNodeToken(db.db, B)).token;
    for (const query of [REPORT_MUTATION, FULL]) {
      const served = fastReportCounts.served;
      const fast = await report(servers.fast, A, ta, query);
      expect(fastReportCounts.served).toBe(served + 1); // not a fall-through to Apollo
      const ordinary = await report(apollo(servers.fast), B, tb, query);
      expect(fastReportCounts.served).toBe(served + 1); // Apollo's
      expect(fast.status).toBe(200);
      expect(same(fast, A, B)).toEqual(ordinary);
    }
    expect(same(await rowOf(A), A, B)).toEqual(await rowOf(B));
    expect(same(await eventsOf(A), A, B)).toEqual(await eventsOf(B));
    expect((await eventsOf(A)).length).toBe(2);
  });

  test.each([
    ["another node's report (FORBIDDEN)", async () => ({ id: B, token: (await createNodeToken(db.db, A)).token })],
    [
      'mid-transition (ReportRefused CONFLICT)',
      async () => {
        await db.db.execute(sql`update components set enabled = true, phase = 'powering_off', last_action = 'powering_off_gracefully'`);
        return { id: A, token: auth.adminToken };
      },
    ],
    ['an unknown component (NOT_FOUND)', async () => ({ id: 'x9000c0s0b0n0', token: auth.adminToken })],
    ['a malformed xname', async () => ({ id: 'garbage', token: auth.adminToken })],
    [
      'a wrong variable type (400, answered by Apollo on both)',
      async () => ({ id: A, token: auth.adminToken, variables: { id: A, token: 7 } }),
    ],
    ['an empty boot token', async () => ({ id: A, token: auth.adminToken, variables: { id: A, token: '' } })],
  ])('%s: the same answer on both paths', async (_what, setup) => {
    const s = (await setup()) as { id: string; token: string; variables?: Record<string, unknown> };
    const body = { query: REPORT_MUTATION, variables: s.variables ?? { id: s.id, token: 'tok-a' } };
    const fast = await post(servers.fast, body, s.token);
    const served = fastReportCounts.served;
    const ordinary = await post(apollo(servers.fast), body, s.token);
    expect(fastReportCounts.served).toBe(served); // Apollo's
    expect(fast).toEqual(ordinary);
    expect(await eventsOf(A)).toEqual([]);
  });
});

describe('what the fast path does not serve reaches express as if it had not looked', () => {
  const raw = async (url: string, body: string, token: string | undefined) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    });
    return { status: res.status, requestId: !!res.headers.get('x-request-id'), body: await res.text() };
  };
  test.each([
    ['a body that is not JSON', '{"query": ', 'admin'],
    ['a JSON string (body-parser is strict)', '"mutation { x }"', 'admin'],
    ['a batch', JSON.stringify([{ query: REPORT_MUTATION, variables: { id: A, token: 'tok-a' } }]), 'admin'],
    ['another document', JSON.stringify({ query: '{ version }' }), 'admin'],
    ['a bad credential', JSON.stringify({ query: REPORT_MUTATION, variables: { id: A, token: 'tok-a' } }), 'bto_0000000000000000_nope'],
    ['no credential', JSON.stringify({ query: REPORT_MUTATION, variables: { id: A, token: 'tok-a' } }), undefined],
  ])('%s: the same answer on both paths', async (_what, body, who) => {
    const token = who === 'admin' ? auth.adminToken : who;
    const served = fastReportCounts.served;
    const fast = await raw(servers.fast.url, body, token);
    expect(fastReportCounts.served).toBe(served);
    expect(fast).toEqual(await raw(apollo(servers.fast), body, token));
    expect(fast.requestId).toBe(true);
  });
});
