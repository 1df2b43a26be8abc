/**
 * Tenancy (reference §2.1) through every query, mutation and subscription: two tenants, acme and bolt,
 * each with its nodes, templates and sessions. Acting for acme (with an acme credential, and as an
 * untenanted admin naming acme in Cray-Tenant-Name) must never show, change or stream anything of
 * bolt's; at the end bolt's rows are exactly as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { errorOf, startHarness, type Harness } from './api-harness.ts';
import { firstResult } from '../helpers/ws.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

let h: Harness;
let world: SimWorld;
let A: string[];
let B: string[];
let acme: Record<string, string>;
let viaHeader: Record<string, string>;
let boltSnapshot: string;

const TEMPLATE = (nodes: string[]) => ({ bootSets: [{ name: 'compute', path: world.defaultImage.manifest, type: 's3', nodeList: nodes }] });
const PUT = 'mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) { template { name tenant } } }';
const CREATE = 'mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name tenant } } }';

/** Every row of bolt's (templates, sessions, nodes and their events), as one string. */
async function boltRows(): Promise<string> {
  const r = await h.db.pool.query(
    `select
    (select json_agg(t order by name) from session_templates t where tenant_key = 'bolt') as templates,
    (select json_agg(s order by name) from sessions s where tenant_key = 'bolt') as sessions,
    (select json_agg(c order by id) from components c where id = any($1)) as components,
    (select count(*) from component_events where component_id = any($1)) as events`,
    [B],
  );
  return JSON.stringify(r.rows[0]);
}

beforeAll(async () => {
  world = new SimWorld({ nodes: 8 });
  h = await startHarness({ adapters: createSimAdapters(world) } as never);
  const ids = world.ids().sort();
  A = ids.slice(0, 2);
  B = ids.slice(2, 4);
  await h.ok('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: A });
  await h.ok('mutation($x: [ID!]!) { setTenantXnames(tenant: "bolt", xnames: $x) { name } }', { x: B });
  await h.ok('mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }', { c: ids.map((id) => ({ id })) });
  acme = h.auth.bearer(await h.auth.token('operator', { tenant: 'acme', subject: 'ann' }));
  viaHeader = { 'Cray-Tenant-Name': 'acme' };
  const bolt = h.auth.bearer(await h.auth.token('operator', { tenant: 'bolt', subject: 'bob' }));
  await h.ok(PUT, { n: 'shared', i: TEMPLATE(A) }, acme);
  await h.ok(CREATE, { i: { operation: 'REBOOT', templateName: 'shared', name: 'acme-s' } }, acme);
  await h.ok(PUT, { n: 'shared', i: TEMPLATE(B) }, bolt);
  await h.ok(PUT, { n: 'bolt-only', i: TEMPLATE(B) }, bolt);
  await h.ok(CREATE, { i: { operation: 'REBOOT', templateName: 'shared', name: 'bolt-s' } }, bolt);
  boltSnapshot = await boltRows();
});
afterAll(async () => {
  await h?.close();
  world?.close();
});

describe.each([
  ['an acme credential', () => acme],
  ['an untenanted admin naming acme', () => viaHeader],
])('queries, as %s', (_who, as) => {
  const ok = (query: string, vars: Record<string, unknown> = {}) => h.ok(query, vars, as());
  const gql = (query: string, vars: Record<string, unknown> = {}) => h.gql(query, vars, as());

  test('sessionTemplates, sessionTemplate, validateSessionTemplate', async () => {
    expect((await ok('{ sessionTemplates { name tenant } }')).sessionTemplates).toEqual([{ name: 'shared', tenant: 'acme' }]);
    expect((await ok('{ sessionTemplate(name: "bolt-only") { name } }')).sessionTemplate).toBeNull();
    const shared = await ok('{ sessionTemplate(name: "shared") { tenant bootSets { nodeList } } }');
    expect(shared.sessionTemplate).toEqual({ tenant: 'acme', bootSets: [{ nodeList: A }] });
    expect(errorOf(await gql('{ validateSessionTemplate(name: "bolt-only") { valid } }')).code).toBe('NOT_FOUND');
  });

  test('sessions, session, sessionStatus', async () => {
    expect((await ok('{ sessions { name tenant } }')).sessions).toEqual([{ name: 'acme-s', tenant: 'acme' }]);
    expect((await ok('{ session(name: "bolt-s") { name } }')).session).toBeNull();
    expect((await ok('{ sessionStatus(name: "bolt-s") { status } }')).sessionStatus).toBeNull();
  });

  test('components, component', async () => {
    const page = await ok('{ components { nodes { id } totalCount } }');
    expect(page.components).toEqual({ nodes: A.map((id) => ({ id })), totalCount: 2 });
    const byIds = await ok('query($ids: [ID!]) { components(filter: { ids: $ids }) { nodes { id } } }', { ids: [...A, ...B] });
    expect(byIds.components.nodes.map((n: { id: string }) => n.id)).toEqual(A);
    expect((await ok('query($id: ID!) { component(id: $id) { id } }', { id: B[0] })).component).toBeNull();
  });

  test('planSession, explain, explainSession, componentTimeline', async () => {
    const plan = await ok('{ planSession(input: { operation: REBOOT, templateName: "bolt-only" }) { valid errors { field message } } }');
    expect(plan.planSession).toMatchObject({ valid: false, errors: [{ field: 'templateName' }] });
    expect((await ok('query($id: ID!) { explain(componentId: $id) { summary } }', { id: B[0] })).explain).toBeNull();
    expect((await ok('query($id: ID!) { explain(componentId: $id) { componentId } }', { id: A[0] })).explain).toEqual({
      componentId: A[0],
    });
    expect((await ok('{ explainSession(name: "bolt-s") { name } }')).explainSession).toBeNull();
    const byNode = await ok('query($id: ID) { componentTimeline(componentId: $id) { events { componentId } } }', { id: B[0] });
    expect(byNode.componentTimeline.events).toEqual([]);
    const bySession = await ok('{ componentTimeline(session: "bolt-s") { events { componentId } } }');
    expect(bySession.componentTimeline.events).toEqual([]);
    const own = await ok('query($id: ID) { componentTimeline(componentId: $id) { events { componentId } } }', { id: A[0] });
    expect(own.componentTimeline.events.length).toBeGreaterThan(0);
  });

  test('componentEvents (the log, paged)', async () => {
    const all = await ok('query($ids: [ID!]) { componentEvents(filter: { ids: $ids }, first: 1000) { componentId } }', {
      ids: [...A, ...B],
    });
    expect(all.componentEvents.length).toBeGreaterThan(0);
    expect(all.componentEvents.filter((e: { componentId: string }) => !A.includes(e.componentId))).toEqual([]);
    const bySession = await ok('{ componentEvents(filter: { session: "bolt-s" }, first: 1000) { componentId } }');
    expect(bySession.componentEvents).toEqual([]);
  });
});

describe('mutations, as an acme credential', () => {
  const gql = (query: string, vars: Record<string, unknown> = {}) => h.gql(query, vars, acme);

  test("templates: bolt's are not found; a name bolt uses is acme's own in acme's namespace", async () => {
    expect(
      errorOf(await gql('mutation { patchSessionTemplate(name: "bolt-only", patch: { description: "x" }) { template { name } } }')).code,
    ).toBe('NOT_FOUND');
    expect(errorOf(await gql('mutation { deleteSessionTemplate(name: "bolt-only") }')).code).toBe('NOT_FOUND');
    const mine = await gql(PUT, { n: 'bolt-only', i: TEMPLATE(A) });
    expect(mine.data.putSessionTemplate.template).toEqual({ name: 'bolt-only', tenant: 'acme' });
    expect((await gql('mutation { deleteSessionTemplate(name: "bolt-only") }')).data.deleteSessionTemplate).toBe(true);
  });

  test("sessions: bolt's template and sessions are out of reach", async () => {
    expect(errorOf(await gql(CREATE, { i: { operation: 'BOOT', templateName: 'bolt-only' } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'templateName',
    });
    expect(errorOf(await gql('mutation { deleteSession(name: "bolt-s") }')).code).toBe('NOT_FOUND');
    for (const m of [
      'pauseSession(name: "bolt-s") { name }',
      'resumeSession(name: "bolt-s") { name }',
      'abortSession(name: "bolt-s") { stopped }',
    ]) {
      expect(errorOf(await gql(`mutation { ${m} }`)).code, m).toBe('NOT_FOUND');
    }
    // A same-named session in acme's namespace does not collide with bolt's.
    expect((await gql(CREATE, { i: { operation: 'BOOT', templateName: 'shared', name: 'bolt-s' } })).data.createSession.session).toEqual({
      name: 'bolt-s',
      tenant: 'acme',
    });
    expect((await gql('mutation { deleteSession(name: "bolt-s") }')).data.deleteSession).toBe(true);
  });

  test("components: bolt's nodes are not found, skipped, or ignored", async () => {
    const vars = { id: B[0], ids: [B[0]] };
    expect(errorOf(await gql('mutation($id: ID!) { patchComponent(id: $id, patch: { enabled: true }) { id } }', vars)).code).toBe(
      'NOT_FOUND',
    );
    expect(
      errorOf(await gql('mutation($ids: [ID!]) { patchComponents(filter: { ids: $ids }, patch: { enabled: true }) { id } }', vars)).code,
    ).toBe('NOT_FOUND');
    expect(
      (
        await gql(
          'mutation($ids: [ID!]) { patchComponents(filter: { ids: $ids }, patch: { enabled: true }, skipBadIds: true) { id } }',
          vars,
        )
      ).data.patchComponents,
    ).toEqual([]);
    expect(
      (await gql('mutation { patchComponents(filter: { session: "bolt-s" }, patch: { enabled: true }) { id } }')).data.patchComponents,
    ).toEqual([]);
    expect(errorOf(await gql('mutation($id: ID!) { deleteComponent(id: $id) }', vars)).code).toBe('NOT_FOUND');
    const staged = await gql('mutation($ids: [ID!]!) { applyStaged(xnames: $ids) { succeeded failed ignored } }', vars);
    expect(staged.data.applyStaged).toEqual({ succeeded: [], failed: [], ignored: [B[0]] });
    const report = await gql(
      'mutation($id: ID!) { reportBootState(id: $id, bssToken: "t") { __typename ... on ReportRefused { code } } }',
      vars,
    );
    expect(report.data.reportBootState).toEqual({ __typename: 'ReportRefused', code: 'NOT_FOUND' });
    // Writes BOS does not tenant-check (component PUTs) and system settings are not for tenants at all.
    expect(errorOf(await gql('mutation($id: ID!) { putComponent(id: $id, input: {}) { id } }', vars)).code).toBe('FORBIDDEN');
    expect(errorOf(await gql('mutation($id: ID!) { putComponents(components: [{ id: $id }]) { id } }', vars)).code).toBe('FORBIDDEN');
    expect(errorOf(await gql('mutation { patchOptions(patch: { defaultRetryPolicy: 1 }) { defaultRetryPolicy } }')).code).toBe('FORBIDDEN');
  });

  test("deleteSessions removes only acme's sessions", async () => {
    const r = await gql('mutation { deleteSessions { count names } }');
    expect(r.data.deleteSessions).toEqual({ count: 1, names: ['acme-s'] });
  });
});

describe('subscriptions, as an acme credential', () => {
  test("componentEvents streams only acme's nodes, from the log and live", async () => {
    const client = createClient({ url: h.server.wsUrl, webSocketImpl: WebSocket, lazy: true, retryAttempts: 0, connectionParams: acme });
    const got: { componentId: string; session: string }[] = [];
    const errors: unknown[] = [];
    let poke = () => {};
    const stop = client.subscribe<{ componentEvents: { componentId: string; session: string } }>(
      {
        query: 'subscription($f: ComponentEventFilter) { componentEvents(filter: $f, after: "0") { componentId session } }',
        variables: { f: { ids: [...A, ...B] } },
      },
      {
        next: (r) => {
          if (r.data) got.push(r.data.componentEvents);
          if (r.errors) errors.push(...r.errors);
          poke();
        },
        error: (e) => {
          errors.push(e);
          poke();
        },
        complete: () => {},
      },
    );
    try {
      // A write to an acme node after subscribing is the sentinel: once it arrives, everything before it has.
      await h.ok('mutation($id: ID!) { patchComponent(id: $id, patch: { enabled: false }) { id } }', { id: A[1] }, acme);
      await h.ok('mutation($id: ID!) { patchComponent(id: $id, patch: { enabled: false }) { id } }', { id: B[1] });
      await h.ok('mutation($id: ID!) { patchComponent(id: $id, patch: { enabled: true }) { id } }', { id: A[0] }, acme);
      await new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`sentinel not received (${JSON.stringify(got)})`)), 10_000);
        poke = () => {
          if (errors.length || got.filter((e) => e.componentId === A[0]).length >= 2) {
            clearTimeout(deadline);
            resolve();
          }
        };
        poke();
      });
      expect(errors).toEqual([]);
      expect(got.length).toBeGreaterThan(2);
      expect(got.filter((e) => !A.includes(e.componentId))).toEqual([]);
    } finally {
      stop();
      await client.dispose();
    }
  });

  test("componentEvents by bolt's session and sessionProgress of bolt's session give nothing of bolt's", async () => {
    const progress = await firstResult(h.server.wsUrl, acme, 'subscription { sessionProgress(name: "bolt-s") { status } }');
    expect(progress.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const own = await firstResult(h.server.wsUrl, acme, 'subscription { sessionProgress(name: "shared-none") { status } }');
    expect(own.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('bolt, afterwards', () => {
  test("every row of bolt's is as it was, but the one write an admin made", async () => {
    const now = JSON.parse(await boltRows());
    const before = JSON.parse(boltSnapshot);
    expect(now.templates).toEqual(before.templates);
    expect(now.sessions).toEqual(before.sessions);
    // The untenanted admin's patch of B[1] (the subscription test) is the only change to bolt's nodes.
    expect(Number(now.events)).toBe(Number(before.events) + 1);
    expect(now.components.find((c: { id: string }) => c.id === B[0])).toEqual(before.components.find((c: { id: string }) => c.id === B[0]));
  });
});
