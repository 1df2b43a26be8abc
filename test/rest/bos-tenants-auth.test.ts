/**
 * The REST door's trust is the GraphQL door's: the same bearer tokens, roles, node credentials and
 * tenants (Cray-Tenant-Name), refused as problem documents. Row 13 of bos-clients.md: a tenant's
 * templates and sessions are its own namespace, lists show only its own, components only its nodes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from '../integration/api-harness.ts';
import { bosClient, loadBosContract, type BosClient } from './bos-client.ts';
import { createRateLimiter } from '../../src/auth/index.ts';

let h: Harness;
let admin: BosClient;
const ACME_NODE = 'x1000c0s0b0n0';
const OTHER_NODE = 'x1000c0s0b0n1';
const template = (node: string) => ({ boot_sets: { b: { path: 's3://boot-images/x/manifest.json', type: 's3', node_list: [node] } } });
const names = (r: { body: { name: string }[] }) => r.body.map((x) => x.name).sort();

beforeAll(async () => {
  await loadBosContract();
  h = await startHarness();
  admin = bosClient(`${h.server.baseUrl}/apis/bos`, h.auth.bearer(h.auth.adminToken));
  await h.ok('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: [ACME_NODE] });
  await h.db.db.execute(sql`insert into components (id) values (${ACME_NODE}), (${OTHER_NODE})`);
});
afterAll(async () => {
  await h?.close();
});
afterEach(async () => {
  const found = await admin.violations();
  admin.exchanges.length = 0;
  expect(found).toEqual([]);
});

const acme = { 'cray-tenant-name': 'acme' };

describe('row 13: tenants', () => {
  test("templates and sessions are the tenant's own namespace; lists show only the tenant's, untenanted lists show all", async () => {
    expect((await admin.req('PUT', '/v2/sessiontemplates/same', { body: template(OTHER_NODE) })).body.tenant).toBeNull();
    const t = await admin.req('PUT', '/v2/sessiontemplates/same', { body: template(ACME_NODE), headers: acme });
    expect(t.body).toMatchObject({ name: 'same', tenant: 'acme' });
    expect((await admin.req('GET', '/v2/sessiontemplates/same', { headers: acme })).body.boot_sets.b.node_list).toEqual([ACME_NODE]);
    expect((await admin.req('GET', '/v2/sessiontemplates/same')).body.boot_sets.b.node_list).toEqual([OTHER_NODE]);
    expect((await admin.req('GET', '/v2/sessiontemplates', { headers: acme })).body.map((x: { tenant: string }) => x.tenant)).toEqual([
      'acme',
    ]);
    expect((await admin.req('GET', '/v2/sessiontemplates')).body).toHaveLength(2);

    const s = await admin.req('POST', '/v2/sessions', { body: { name: 'sa', operation: 'boot', template_name: 'same' }, headers: acme });
    expect(s.body).toMatchObject({ name: 'sa', tenant: 'acme' });
    await admin.req('POST', '/v2/sessions', { body: { name: 'su', operation: 'boot', template_name: 'same' } });
    expect(names(await admin.req('GET', '/v2/sessions', { headers: acme }))).toEqual(['sa']);
    expect(names(await admin.req('GET', '/v2/sessions'))).toEqual(['sa', 'su']);
    expect((await admin.req('GET', '/v2/sessions/su', { headers: acme })).status).toBe(404);
    expect((await admin.req('DELETE', '/v2/sessions/sa')).status).toBe(404);
    expect((await admin.req('DELETE', '/v2/sessions/sa', { headers: acme })).status).toBe(204);
  });

  test('a tenant sees and patches only its nodes; an unknown tenant is 400 "Invalid tenant"', async () => {
    const list = await admin.req('GET', '/v2/components', { headers: acme });
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([ACME_NODE]);
    expect((await admin.req('GET', `/v2/components/${OTHER_NODE}`, { headers: acme })).status).toBe(404);
    expect((await admin.req('PATCH', `/v2/components/${OTHER_NODE}`, { body: { enabled: false }, headers: acme })).status).toBe(404);
    const nobody = await admin.req('PUT', '/v2/sessiontemplates/x', {
      body: template(ACME_NODE),
      headers: { 'cray-tenant-name': 'nobody' },
    });
    expect(nobody.body).toMatchObject({ status: 400, detail: 'Cray-Tenant-Name: Invalid tenant "nobody"' });
  });

  test('a credential issued for a tenant may not name another, and may not read system-wide options', async () => {
    const acmeOperator = h.auth.bearer(await h.auth.token('operator', { tenant: 'acme' }));
    const other = await admin.req('GET', '/v2/sessiontemplates', { headers: { ...acmeOperator, 'cray-tenant-name': 'umbrella' } });
    expect(other.body).toMatchObject({ status: 403, title: 'Forbidden' });
    expect(
      (await admin.req('GET', '/v2/sessiontemplates', { headers: acmeOperator })).body.map((x: { tenant: string }) => x.tenant),
    ).toEqual(['acme']);
    expect((await admin.req('PATCH', '/v2/options', { body: { polling_frequency: 20 }, headers: acmeOperator })).status).toBe(403);
  });
});

describe('credentials and roles', () => {
  test('no or a bad token: 401 with a problem document; public version and healthz still answer', async () => {
    const anon = bosClient(`${h.server.baseUrl}/apis/bos`, {});
    const r = await anon.req('GET', '/v2/sessiontemplates');
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(r.body).toMatchObject({ status: 401, detail: expect.stringMatching(/no credential/) });
    expect((await anon.req('GET', '/v2/components', { headers: { authorization: 'Bearer bto_nonsense' } })).status).toBe(401);
    expect((await anon.req('GET', '/v2/healthz')).status).toBe(200);
    expect((await anon.req('GET', '/v2/version')).status).toBe(200);
    expect(await anon.violations()).toEqual([]);
  });

  test('a viewer reads but may not write; an operator may not change options', async () => {
    const viewer = h.auth.bearer(await h.auth.token('viewer'));
    expect((await admin.req('GET', '/v2/components', { headers: viewer })).status).toBe(200);
    const put = await admin.req('PUT', '/v2/sessiontemplates/v', { body: template(ACME_NODE), headers: viewer });
    expect(put.body).toMatchObject({ status: 403, detail: expect.stringMatching(/needs role operator/) });
    const operator = h.auth.bearer(await h.auth.token('operator'));
    expect((await admin.req('PATCH', '/v2/options', { body: { polling_frequency: 20 }, headers: operator })).status).toBe(403);
    expect((await admin.req('GET', '/v2/options', { headers: operator })).status).toBe(200);
  });

  test('the per-token rate limit (the same edge as GraphQL, every request counted) answers 429 with Retry-After', async () => {
    const limited = await startHarness({
      auth: { authenticator: h.auth.auth.authenticator, limiter: createRateLimiter({ burst: 2, perSecond: 0.01, now: () => new Date(0) }) },
    });
    try {
      const c = bosClient(`${limited.server.baseUrl}/apis/bos`, h.auth.bearer(h.auth.adminToken));
      expect((await c.req('GET', '/v2/healthz')).status).toBe(200);
      expect((await c.req('GET', '/v2/sessions')).status).toBe(200);
      const r = await c.req('GET', '/v2/sessions');
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.body).toMatchObject({ status: 429, detail: expect.any(String) });
      expect(await c.violations()).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  test("writes record the credential's subject as the actor, as GraphQL writes do", async () => {
    const operator = h.auth.bearer(await h.auth.token('operator', { subject: 'rest-op' }));
    await admin.req('PATCH', `/v2/components/${ACME_NODE}`, { body: { error: 'looked at' }, headers: operator });
    const ev = await h.db.db.execute(sql`select actor from component_events where component_id = ${ACME_NODE} order by id desc limit 1`);
    expect(ev.rows).toEqual([{ actor: 'rest-op' }]);
  });
});
