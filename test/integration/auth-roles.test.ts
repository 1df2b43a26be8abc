/**
 * Every role against every root field of the schema, over real HTTP and graphql-ws: who may call what
 * (POLICY in src/auth/authorize.ts, applied to the whole schema by src/api/auth.ts). The expectations
 * are written out here by kind of operation, independently of POLICY, and the test fails when the
 * schema grows a root field nobody classified here.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { errorOf, startHarness, type GqlResult, type Harness } from './api-harness.ts';
import { firstResult } from '../helpers/ws.ts';
import { buildSchema } from '../../src/api/schema.ts';

let h: Harness;
const NODE = 'x1c0s0b0n0';
const OTHER_NODE = 'x1c0s0b0n1';

type Kind = 'public' | 'self' | 'read' | 'system-read' | 'write' | 'system-write' | 'report' | 'admin' | 'console' | 'session-admin';
interface Op {
  kind: Kind;
  doc: string;
  vars?: Record<string, unknown>;
}

const q = (kind: Kind, doc: string, vars?: Record<string, unknown>): Op => ({ kind, doc, vars });

/** One call per root field; arguments name nothing that exists, so allowed calls change (almost) nothing. */
const QUERIES: Record<string, Op> = {
  version: q('public', '{ version { version } }'),
  health: q('public', '{ health { api } }'),
  whoami: q('self', '{ whoami { subject role } }'),
  sessionTemplates: q('read', '{ sessionTemplates { name } }'),
  sessionTemplate: q('read', '{ sessionTemplate(name: "nope") { name } }'),
  sessionTemplateExample: q('read', '{ sessionTemplateExample { name } }'),
  validateSessionTemplate: q('read', '{ validateSessionTemplate(name: "nope") { valid } }'),
  sessions: q('read', '{ sessions { name } }'),
  session: q('read', '{ session(name: "nope") { name } }'),
  sessionStatus: q('read', '{ sessionStatus(name: "nope") { status } }'),
  components: q('read', '{ components(first: 1) { nodes { id } } }'),
  machineMap: q('read', '{ machineMap { ids } }'),
  component: q('read', `{ component(id: "${NODE}") { id } }`),
  options: q('read', '{ options { defaultRetryPolicy } }'),
  planSession: q('read', '{ planSession(input: { operation: BOOT, templateName: "nope" }) { valid } }'),
  explain: q('read', `{ explain(componentId: "${NODE}") { summary } }`),
  explainSession: q('read', '{ explainSession(name: "nope") { name } }'),
  componentEvents: q('read', '{ componentEvents(first: 1) { cursor } }'),
  componentTimeline: q('read', `{ componentTimeline(componentId: "${NODE}") { nextCursor } }`),
  nodeConsole: q('console', `{ nodeConsole(componentId: "${NODE}") { text } }`),
  apiTokens: q('admin', '{ apiTokens { id } }'),
  tenants: q('admin', '{ tenants { name } }'),
  nodes: q('system-read', '{ nodes { xname } }'),
};

const MUTATIONS: Record<string, Op> = {
  putSessionTemplate: q(
    'write',
    'mutation { putSessionTemplate(name: "authz-t", input: { bootSets: [{ name: "c", path: "s3://b/m.json", type: "s3", nodeList: ["x1c0s0b0n0"] }] }) { template { name } } }',
  ),
  patchSessionTemplate: q('write', 'mutation { patchSessionTemplate(name: "nope", patch: { description: "d" }) { template { name } } }'),
  deleteSessionTemplate: q('write', 'mutation { deleteSessionTemplate(name: "nope") }'),
  createSession: q('write', 'mutation { createSession(input: { operation: BOOT, templateName: "nope" }) { session { name } } }'),
  deleteSession: q('write', 'mutation { deleteSession(name: "nope") }'),
  deleteSessions: q('write', 'mutation { deleteSessions(status: COMPLETE, minAge: "52w") { count } }'),
  patchComponent: q('write', 'mutation { patchComponent(id: "x9c0s0b0n9", patch: { enabled: false }) { id } }'),
  patchComponents: q('write', 'mutation { patchComponents(filter: { ids: ["x9c0s0b0n9"] }, patch: { enabled: false }) { id } }'),
  deleteComponent: q('write', 'mutation { deleteComponent(id: "x9c0s0b0n9") }'),
  applyStaged: q('write', 'mutation { applyStaged(xnames: ["x9c0s0b0n9"]) { ignored } }'),
  pauseSession: q('write', 'mutation { pauseSession(name: "nope") { name } }'),
  resumeSession: q('write', 'mutation { resumeSession(name: "nope") { name } }'),
  abortSession: q('write', 'mutation { abortSession(name: "nope") { stopped } }'),
  approveSession: q('session-admin', 'mutation { approveSession(name: "nope") { name } }'),
  releaseQuarantine: q('write', 'mutation { releaseQuarantine(ids: ["x9c0s0b0n9"]) { released } }'),
  putComponent: q('system-write', 'mutation { putComponent(id: "x9c0s0b0n8", input: {}) { id } }'),
  putComponents: q('system-write', 'mutation { putComponents(components: [{ id: "x9c0s0b0n8" }]) { id } }'),
  reportBootState: q('report', `mutation { reportBootState(id: "${NODE}", bssToken: "t") { __typename } }`),
  deployHeartbeat: q('report', `mutation { deployHeartbeat(id: "${NODE}", state: STARTING) { __typename } }`),
  patchOptions: q('admin', 'mutation { patchOptions(patch: {}) { defaultRetryPolicy } }'),
  createApiToken: q('admin', 'mutation { createApiToken(role: VIEWER, subject: "made-in-test") { info { id } } }'),
  createNodeToken: q('admin', 'mutation { createNodeToken(xname: "x9c0s0b0n7") { info { id } } }'),
  revokeApiToken: q('admin', 'mutation { revokeApiToken(id: "0000000000000000") }'),
  setTenantXnames: q('admin', 'mutation { setTenantXnames(tenant: "scratch", xnames: ["x9c0s0b0n6"]) { name } }'),
  deleteTenant: q('admin', 'mutation { deleteTenant(tenant: "nope") }'),
  registerNodes: q('admin', 'mutation { registerNodes(nodes: []) { xname } }'),
  deleteNode: q('admin', 'mutation { deleteNode(xname: "x9c0s0b0n9") }'),
  discoverNodes: q('admin', 'mutation { discoverNodes(input: { targets: [], username: "u", password: "p" }) { asked } }'),
  inspectNodes: q('admin', 'mutation { inspectNodes(xnames: ["x9c0s0b0n9"], dryRun: true) { asked } }'),
};

/** Subscriptions answer at once when allowed: a bad cursor or an unknown session. */
const SUBSCRIPTIONS: Record<string, Op> = {
  componentEvents: q('read', 'subscription { componentEvents(after: "not-a-cursor") { cursor } }'),
  componentEventBatches: q('read', 'subscription { componentEventBatches(after: "not-a-cursor") { cursor } }'),
  sessionProgress: q('read', 'subscription { sessionProgress(name: "nope") { status } }'),
};

interface Caller {
  name: string;
  role: 'none' | 'viewer' | 'operator' | 'admin' | 'node';
  tenant: string | null;
  headers: Record<string, string>;
}
const callers: Caller[] = [];

function allowed(kind: Kind, c: Caller): boolean {
  const human = c.role === 'viewer' || c.role === 'operator' || c.role === 'admin';
  const operator = c.role === 'operator' || c.role === 'admin';
  switch (kind) {
    case 'public':
      return true;
    case 'self':
      return c.role !== 'none';
    case 'read':
      return human;
    case 'system-read':
      return human && c.tenant === null;
    case 'write':
      return operator;
    case 'system-write':
      return operator && c.tenant === null;
    case 'report':
      return operator || c.role === 'node';
    case 'admin':
      return c.role === 'admin' && c.tenant === null;
    // Node consoles can hold secrets: operators and admins, untenanted (viewers only with console_viewers, off here).
    case 'console':
      return operator && c.tenant === null;
    case 'session-admin':
      return c.role === 'admin';
  }
}

const AUTH_CODES = ['UNAUTHENTICATED', 'FORBIDDEN'];

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) values ('acme', ${NODE}), ('acme', ${OTHER_NODE})`);
  const bearer = async (role: 'viewer' | 'operator' | 'admin', tenant: string | null) =>
    h.auth.bearer(await h.auth.token(role, { tenant: tenant ?? undefined, subject: `${role}@${tenant ?? 'all'}` }));
  callers.push(
    { name: 'no credential', role: 'none', tenant: null, headers: { authorization: '' } },
    { name: 'viewer', role: 'viewer', tenant: null, headers: await bearer('viewer', null) },
    { name: 'operator', role: 'operator', tenant: null, headers: await bearer('operator', null) },
    { name: 'admin', role: 'admin', tenant: null, headers: h.auth.bearer(h.auth.adminToken) },
    { name: 'node', role: 'node', tenant: null, headers: h.auth.bearer(await h.auth.token('node', { xname: NODE })) },
    { name: 'tenant viewer', role: 'viewer', tenant: 'acme', headers: await bearer('viewer', 'acme') },
    { name: 'tenant operator', role: 'operator', tenant: 'acme', headers: await bearer('operator', 'acme') },
    { name: 'tenant admin', role: 'admin', tenant: 'acme', headers: await bearer('admin', 'acme') },
  );
});
afterAll(async () => {
  await h?.close();
});

function codeOf(r: { errors?: { extensions?: Record<string, unknown> }[] }): string | undefined {
  return (
    r.errors?.map((e) => e.extensions?.code as string | undefined).find((c) => c && AUTH_CODES.includes(c)) ??
    (r.errors?.[0]?.extensions?.code as string | undefined)
  );
}

describe('every root field is classified', () => {
  test("the table above names exactly the schema's root fields", () => {
    const schema = buildSchema();
    const names = (t: { getFields(): Record<string, unknown> } | null | undefined) => Object.keys(t?.getFields() ?? {}).sort();
    expect(names(schema.getQueryType())).toEqual(Object.keys(QUERIES).sort());
    expect(names(schema.getMutationType())).toEqual(Object.keys(MUTATIONS).sort());
    expect(names(schema.getSubscriptionType())).toEqual(Object.keys(SUBSCRIPTIONS).sort());
  });
});

describe('role x operation over HTTP', () => {
  const fields = Object.entries({ ...QUERIES, ...MUTATIONS });
  test.each(fields)('%s', async (field, op) => {
    const outcomes: string[] = [];
    for (const c of callers) {
      const r: GqlResult = await h.gql(op.doc, op.vars, c.headers);
      const code = codeOf(r);
      const want = allowed(op.kind, c);
      const denied = code !== undefined && AUTH_CODES.includes(code);
      outcomes.push(`${c.name}: ${want ? 'allowed' : 'denied'} -> ${denied ? code : `ran (${code ?? 'ok'})`}`);
      if (want) {
        expect(denied, `${field} for ${c.name}: ${JSON.stringify(r.errors)}`).toBe(false);
        expect(code, `${field} for ${c.name} must not fail internally`).not.toBe('INTERNAL_SERVER_ERROR');
      } else {
        expect(code, `${field} for ${c.name}: ${JSON.stringify(r)}`).toBe(c.role === 'none' ? 'UNAUTHENTICATED' : 'FORBIDDEN');
        expect(r.status).toBe(c.role === 'none' ? 401 : 403);
      }
    }
    expect(outcomes.length).toBe(callers.length);
  });
});

describe('role x subscription over graphql-ws', () => {
  test.each(Object.entries(SUBSCRIPTIONS))('%s', async (field, op) => {
    for (const c of callers) {
      const r = await firstResult(h.server.wsUrl, c.headers, op.doc);
      const code = codeOf(r);
      if (c.role === 'none') {
        // graphql-ws: a connection_init without a valid credential is closed, 4403 Forbidden.
        expect(r.closed, `${field} for ${c.name}: ${JSON.stringify(r)}`).toMatchObject({
          code: 4403,
          reason: expect.stringMatching(/^Forbidden: not authenticated/),
        });
        continue;
      }
      if (allowed(op.kind, c)) {
        expect(AUTH_CODES, `${field} for ${c.name}: ${JSON.stringify(r)}`).not.toContain(code);
        expect(code, `${field} for ${c.name}`).toMatch(/BAD_USER_INPUT|NOT_FOUND/);
      } else {
        expect(code, `${field} for ${c.name}: ${JSON.stringify(r)}`).toBe('FORBIDDEN');
      }
    }
  });
});

describe('credentials', () => {
  const WHOAMI = '{ whoami { subject role tenant credentialTenant node via tokenId actor } }';

  test('whoami says who the credential is, and what writes record as the actor', async () => {
    expect((await h.ok(WHOAMI)).whoami).toMatchObject({
      subject: 'tester',
      role: 'ADMIN',
      tenant: null,
      via: 'API_TOKEN',
      actor: 'tester',
    });
    const node = await h.ok(WHOAMI, {}, h.auth.bearer(await h.auth.token('node', { xname: 'X0001C0S0B0N5' })));
    expect(node.whoami).toMatchObject({ subject: 'x1c0s0b0n5', role: 'NODE', node: 'x1c0s0b0n5', actor: 'node:x1c0s0b0n5' });
    const tenant = await h.ok(WHOAMI, {}, h.auth.bearer(await h.auth.token('operator', { tenant: 'acme', subject: 'ann' })));
    expect(tenant.whoami).toMatchObject({ subject: 'ann', role: 'OPERATOR', tenant: 'acme', credentialTenant: 'acme' });
  });

  test('a rejected credential says why, never echoing it', async () => {
    const cases: [string, string][] = [
      ['Basic abc', 'malformed'],
      ['Bearer nonsense', 'malformed'],
      [`Bearer bto_${'0'.repeat(16)}_${'x'.repeat(43)}`, 'unknown-token'],
    ];
    for (const [header, reason] of cases) {
      const r = await h.gql('{ sessions { name } }', {}, { authorization: header });
      expect(r.status).toBe(401);
      expect(r.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason });
      expect(JSON.stringify(r)).not.toContain('x'.repeat(43));
    }
  });

  test('revoked and expired tokens stop working at once', async () => {
    const issued = await h.ok(
      'mutation { createApiToken(role: OPERATOR, subject: "temp", ttlSeconds: 3600) { token info { id role expiresAt } } }',
    );
    const { token, info } = issued.createApiToken;
    expect(info.role).toBe('OPERATOR');
    expect((await h.gql('{ whoami { subject } }', {}, h.auth.bearer(token))).data.whoami.subject).toBe('temp');
    expect((await h.ok(`mutation { revokeApiToken(id: "${info.id}") }`)).revokeApiToken).toBe(true);
    expect((await h.ok(`mutation { revokeApiToken(id: "${info.id}") }`)).revokeApiToken).toBe(false);
    const after = await h.gql('{ whoami { subject } }', {}, h.auth.bearer(token));
    expect(after.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'revoked' });
    await h.db.db.execute(sql`update api_tokens set expires_at = now() - interval '1 second' where subject = 'operator@all'`);
    const expired = await h.gql('{ whoami { subject } }', {}, callers.find((c) => c.name === 'operator')!.headers);
    expect(expired.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'expired' });
    await h.db.db.execute(sql`update api_tokens set expires_at = null where subject = 'operator@all'`);
  });

  test('a node credential reports only for its own xname; re-issuing it revokes the old one', async () => {
    const mine = h.auth.bearer(await h.auth.token('node', { xname: 'x1c0s0b0n3' }));
    const own = await h.gql(`mutation { reportBootState(id: "X1C0S0B0N3", bssToken: "t") { __typename } }`, {}, mine);
    expect(own.errors).toBeUndefined();
    const other = await h.gql(`mutation { reportBootState(id: "x1c0s0b0n4", bssToken: "t") { __typename } }`, {}, mine);
    expect(errorOf(other)).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/x1c0s0b0n3 may not report for x1c0s0b0n4/) });
    const again = await h.ok('mutation { createNodeToken(xname: "x1c0s0b0n3") { token } }');
    expect(errorOf(await h.gql('{ whoami { subject } }', {}, mine)).code).toBe('UNAUTHENTICATED');
    expect((await h.ok('{ whoami { node } }', {}, h.auth.bearer(again.createNodeToken.token))).whoami.node).toBe('x1c0s0b0n3');
  });

  test('a tenant credential is pinned to its tenant: another tenant header is refused', async () => {
    const acme = h.auth.bearer(await h.auth.token('viewer', { tenant: 'acme', subject: 'pinned' }));
    expect((await h.ok('{ whoami { tenant } }', {}, { ...acme, 'Cray-Tenant-Name': 'acme' })).whoami.tenant).toBe('acme');
    const other = await h.gql('{ sessions { name } }', {}, { ...acme, 'Cray-Tenant-Name': 'bolt' });
    expect(errorOf(other)).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/credential is for tenant acme, not bolt/) });
    // Public fields stay public.
    expect((await h.gql('{ version { version } }', {}, { ...acme, 'Cray-Tenant-Name': 'bolt' })).errors).toBeUndefined();
  });

  test("the actor of every write is the credential's subject, not a header", async () => {
    const op = h.auth.bearer(await h.auth.token('operator', { subject: 'olga' }));
    await h.ok('mutation { putComponent(id: "x7c0s0b0n0", input: {}) { id } }', {}, { ...op, 'x-bootorch-actor': 'mallory' });
    const ev = await h.db.db.execute(sql`select actor from component_events where component_id = 'x7c0s0b0n0'`);
    expect(ev.rows).toEqual([{ actor: 'olga' }]);
  });
});

describe('token and tenant administration', () => {
  test('tokens list without secrets; node tokens need a node xname; input errors name the field', async () => {
    const list = await h.ok('{ apiTokens { id role tenant subject } }');
    expect(JSON.stringify(list)).not.toMatch(/bto_/);
    expect(list.apiTokens.find((t: { subject: string }) => t.subject === 'tester')).toMatchObject({ role: 'ADMIN', tenant: null });
    expect(errorOf(await h.gql('mutation { createNodeToken(xname: "x1000") { token } }'))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'xname',
    });
    expect(errorOf(await h.gql('mutation { createApiToken(role: VIEWER, subject: " ") { token } }'))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'subject',
    });
    expect(errorOf(await h.gql('mutation { createApiToken(role: VIEWER, subject: "s", tenant: "ghost") { token } }'))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'tenant',
    });
    expect(errorOf(await h.gql('mutation { createApiToken(role: VIEWER, subject: "s", ttlSeconds: 0) { token } }'))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'ttlSeconds',
    });
    expect(errorOf(await h.gql('mutation { revokeApiToken(id: "zz") }'))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
  });

  test('tenants: set (idempotent), an xname has one owner, delete', async () => {
    const set = await h.ok(
      'mutation { setTenantXnames(tenant: "blue", xnames: ["X5C0S0B0N1", "x5c0s0b0n0", "x5c0s0b0n0"]) { name xnames } }',
    );
    expect(set.setTenantXnames).toEqual({ name: 'blue', xnames: ['x5c0s0b0n0', 'x5c0s0b0n1'] });
    expect(
      (await h.ok('mutation { setTenantXnames(tenant: "blue", xnames: ["x5c0s0b0n1", "x5c0s0b0n0"]) { xnames } }')).setTenantXnames.xnames,
    ).toHaveLength(2);
    const taken = await h.gql('mutation { setTenantXnames(tenant: "red", xnames: ["x5c0s0b0n2", "x5c0s0b0n1"]) { name } }');
    expect(errorOf(taken)).toMatchObject({
      code: 'CONFLICT',
      field: 'xnames[1]',
      message: expect.stringMatching(/belongs to tenant "blue"/),
    });
    const tenants = (await h.ok('{ tenants { name xnames } }')).tenants;
    expect(tenants.find((t: { name: string }) => t.name === 'blue').xnames).toEqual(['x5c0s0b0n0', 'x5c0s0b0n1']);
    expect(tenants.find((t: { name: string }) => t.name === 'red')).toBeUndefined();
    expect(errorOf(await h.gql('mutation { setTenantXnames(tenant: "red", xnames: []) { name } }'))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'xnames',
    });
    expect((await h.ok('mutation { deleteTenant(tenant: "blue") }')).deleteTenant).toBe(true);
    expect(errorOf(await h.gql('mutation { deleteTenant(tenant: "blue") }')).code).toBe('NOT_FOUND');
    expect(errorOf(await h.gql('{ components { nodes { id } } }', {}, { 'Cray-Tenant-Name': 'blue' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'Cray-Tenant-Name',
    });
  });
});

describe('rate limit', () => {
  test('per principal, once per request before the document is parsed, with a clear error and Retry-After', async () => {
    const { createRateLimiter } = await import('../../src/auth/index.ts');
    const { startApiServer } = await import('../../src/api/server.ts');
    let t = 0;
    const limiter = createRateLimiter({ burst: 3, perSecond: 1, now: () => new Date(t) });
    const s = await startApiServer({ db: h.db.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', auth: { ...h.auth.auth, limiter } });
    try {
      const call = () =>
        fetch(s.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
          body: JSON.stringify({ query: '{ sessions { name } }' }),
        });
      for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200);
      const refused = await call();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      const body = (await refused.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(body.errors[0]).toMatchObject({
        message: expect.stringMatching(/rate limit of 1\/s \(burst 3\) exceeded for tester/),
        extensions: { code: 'RATE_LIMITED', retryAfterSeconds: 1 },
      });
      t += 1000;
      expect((await call()).status).toBe(200);
      // Requests without a credential are counted per client address, not against the principal.
      const health = await fetch(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ health { api } }' }),
      });
      expect(health.status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
