import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { sql } from 'drizzle-orm';
import { loopbackCert, openssl } from '../helpers/tls.ts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { devAdminHeaders, devAuthEnv } from '../helpers/auth.ts';
import { createNodeToken } from '../../src/auth/index.ts';
import { bosClient, loadBosContract } from './bos-client.ts';

const NODE = 'x3000c0s19b1n0';
let dir = '';
let db: TestDb;
let api: RoleProcess;
let base = '';
let trusting: Agent;

beforeAll(async () => {
  await loadBosContract();
  if (!openssl) return;
  dir = loopbackCert('bootorch-api-tls-').dir;
  trusting = new Agent({ connect: { ca: readFileSync(join(dir, 'cert.pem'), 'utf8') } });
  db = await freshDb();
  api = startRole('api', {
    ...devAuthEnv(),
    DATABASE_URL: db.url,
    PORT: '0',
    BOOTORCH_TLS_CERT_FILE: join(dir, 'cert.pem'),
    BOOTORCH_TLS_KEY_FILE: join(dir, 'key.pem'),
  });
  base = (await api.waitFor(/BOS v2 REST: (https:\/\/\S+)\/apis\/bos\/v2/))[1]!;
}, 120_000);
afterAll(async () => {
  await api?.stop();
  await trusting?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!openssl)('the API over HTTPS', () => {
  test('prints https URLs for GraphQL and the REST door', () => {
    expect(api.output()).toMatch(/bootorch api: https:\/\/127\.0\.0\.1:\d+\/graphql/);
    expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  test("row 12 over HTTPS: the reporter's PATCH with a node credential, through the gateway path", async () => {
    await db.db.execute(sql`insert into components (id) values (${NODE})`);
    await db.db.execute(sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok-tls', 'k', 'p', 'i')`);
    const nodeToken = (await createNodeToken(db.db, NODE)).token;
    const viaCa = ((url: string, init: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: trusting })) as unknown as typeof fetch;
    const reporter = bosClient(`${base}/apis/bos`, { authorization: `Bearer ${nodeToken}` }, { fetch: viaCa });
    const r = await reporter.req('PATCH', `/v2/components/${NODE}`, { body: { id: NODE, actual_state: { bss_token: 'tok-tls' } } });
    expect(r.status).toBe(200);
    expect(r.body.actual_state).toMatchObject({
      boot_artifacts: { kernel: 'k', kernel_parameters: 'p', initrd: 'i' },
      bss_token: 'tok-tls',
    });
    const unknown = await reporter.req('PATCH', '/v2/components/x3000c0s20b1n0', {
      body: { id: 'x3000c0s20b1n0', actual_state: { bss_token: 'tok-tls' } },
    });
    expect(unknown.status).toBe(403); // a node credential may report for its own xname only
    const admin = bosClient(`${base}/apis/bos`, devAdminHeaders(), { fetch: viaCa });
    expect((await admin.req('GET', '/v2/healthz')).body).toEqual({ dbStatus: 'ok', apiStatus: 'ok' });
    expect(await reporter.violations()).toEqual([]);
    expect(await admin.violations()).toEqual([]);
  });

  test('GraphQL and its subscriptions answer over the same TLS port (https and wss)', async () => {
    const ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const r = await undiciFetch(`${base}/graphql`, {
      method: 'POST',
      dispatcher: trusting,
      headers: { 'content-type': 'application/json', ...devAdminHeaders() },
      body: JSON.stringify({ query: '{ version { version } }' }),
    });
    expect(((await r.json()) as { data: { version: { version: string } } }).data.version.version).toMatch(/^\d+\.\d+/);
    class TrustingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { ca });
      }
    }
    const client = createClient({
      url: `${base.replace('https:', 'wss:')}/graphql`,
      webSocketImpl: TrustingWebSocket,
      retryAttempts: 0,
      connectionParams: devAdminHeaders(),
    });
    try {
      const first = await new Promise<unknown>((resolve, reject) => {
        client.subscribe({ query: '{ health { api } }' }, { next: resolve, error: reject, complete: () => undefined });
      });
      expect(first).toEqual({ data: { health: { api: 'OK' } } });
    } finally {
      await client.dispose();
    }
  });

  test('a client that does not trust the certificate, or speaks plain HTTP, gets nowhere', async () => {
    const e = await fetch(`${base}/v2/healthz`).then(
      () => null,
      (x: Error & { cause?: { code?: string } }) => x.cause?.code ?? x.message,
    );
    expect(e).toMatch(/SELF_SIGNED|DEPTH_ZERO|UNABLE_TO/);
    const plain = await fetch(`${base.replace('https:', 'http:')}/v2/healthz`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(plain).not.toBe(200);
  });
});
