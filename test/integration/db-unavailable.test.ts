/**
 * Database trouble is named, never shown as SQL: PostgreSQL refusing connections (a role whose
 * CONNECTION LIMIT is 0 gets SQLSTATE 53300, "too many connections") and a failover (a read-only
 * session gets 25006 on writes, as a demoted primary answers) give GraphQL `UNAVAILABLE` with
 * `retryAfter`, HTTP 503 with Retry-After (GraphQL and the BOS REST door), over WebSocket too (where
 * a subscription's failed setup was once called BAD_USER_INPUT), and a node's error text names the
 * database, not the query.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { connect, type Connection } from '../../src/db/client.ts';
import { errorText, fromError } from '../../src/engine/outcome.ts';
import { firstResult } from '../helpers/ws.ts';

let h: Harness;
const roles = { refused: `bootorch_refused_${randomBytes(4).toString('hex')}`, readOnly: `bootorch_ro_${randomBytes(4).toString('hex')}` };
const pools: Connection[] = [];
const servers: ApiServer[] = [];

/** The harness database's URL as another role. */
const asRole = (role: string) => {
  const u = new URL(h.db.url);
  u.username = role;
  u.password = '';
  return u.toString();
};
const serverOn = async (role: string) => {
  const c = connect(asRole(role), { max: 2 });
  pools.push(c);
  // The credentials are checked on the harness's own database: the resolvers meet the trouble.
  const s = await startApiServer({ db: c.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', auth: h.auth.auth });
  servers.push(s);
  return { conn: c, server: s };
};
const post = (s: ApiServer, query: string, variables: Record<string, unknown> = {}) =>
  fetch(s.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
    body: JSON.stringify({ query, variables }),
  });
const SQL_TEXT = /select |insert |from "|Failed query|params:/i;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql.raw(`create role ${roles.refused} login connection limit 0`));
  await h.db.db.execute(sql.raw(`create role ${roles.readOnly} login superuser`));
  await h.db.db.execute(sql.raw(`alter role ${roles.readOnly} set default_transaction_read_only = on`));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const p of pools) await p.close();
  for (const r of Object.values(roles)) await h?.db.db.execute(sql.raw(`drop role if exists ${r}`));
  await h?.close();
});

describe('refused connections (53300)', () => {
  test('GraphQL over HTTP: 503, Retry-After, UNAVAILABLE with retryAfter, the reason, no SQL', async () => {
    const { server } = await serverOn(roles.refused);
    const r = await post(server, '{ sessions { name } }');
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    const body = (await r.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors[0]!.extensions).toEqual({ code: 'UNAVAILABLE', retryAfter: 5 });
    expect(body.errors[0]!.message).toBe('service unavailable: the database cannot be used (too many connections); retry in 5 s');
    expect(JSON.stringify(body)).not.toMatch(SQL_TEXT);
  });

  test('BOS REST: 503 problem with Retry-After, no SQL', async () => {
    const server = servers[0]!;
    const r = await fetch(`${server.baseUrl}/apis/bos/v2/sessions`, { headers: h.auth.bearer(h.auth.adminToken) });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    const body = (await r.json()) as { detail: string };
    expect(body.detail).toMatch(/database cannot be used \(too many connections\); retry in 5 s/);
    expect(JSON.stringify(body)).not.toMatch(SQL_TEXT);
  });

  test('a subscription whose first read fails is UNAVAILABLE over WebSocket, not BAD_USER_INPUT', async () => {
    const server = servers[0]!;
    const r = await firstResult(
      server.url.replace(/^http/, 'ws'),
      h.auth.bearer(h.auth.adminToken),
      'subscription { sessionProgress(name: "s1") { name } }',
    );
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'UNAVAILABLE', retryAfter: 5 });
    expect(r.errors?.[0]?.message).toMatch(/database cannot be used/);
  });

  test("a node's error: the database and why, no query; the engine retries it", async () => {
    const { conn } = await serverOn(roles.refused);
    const e = await conn.db.execute(sql`select id, error from components where id = ${'x1c0s0b0n0'}`).catch((x: unknown) => x);
    expect(errorText(e)).toBe('database unavailable (too many connections); retrying');
    expect(fromError(e)).toMatchObject({ kind: 'continue', retry: true });
  });
});

describe('failover: a read-only transaction (25006)', () => {
  test('a write answers UNAVAILABLE (503) naming the read-only database; reads still work', async () => {
    const { server } = await serverOn(roles.readOnly);
    expect((await (await post(server, '{ sessions { name } }')).json()).data).toEqual({ sessions: [] });
    const r = await post(server, 'mutation { patchOptions(patch: { pollingFrequency: 7 }) { pollingFrequency } }');
    const body = (await r.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'UNAVAILABLE', retryAfter: 5 });
    expect(body.errors[0]!.message).toMatch(/read-only: a standby after a failover\); retry in 5 s/);
    expect(r.status).toBe(503);
    expect(JSON.stringify(body)).not.toMatch(SQL_TEXT);
  });
});
