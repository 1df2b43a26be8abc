/**
 * Tenant sessions end to end: the API (with tenant credentials) on top of the engine and the simulated
 * cluster. A template that names a foreign node fails session setup with a clear error and touches no
 * hardware; a template whose group spans other tenants' nodes boots only the tenant's own.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { testAuth } from '../helpers/auth.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';

let c: Cluster;
let api: ApiServer;
let acme: Record<string, string>;
let admin: Record<string, string>;
let A: string[];
let B: string[];

async function gql(query: string, variables: Record<string, unknown>, headers: Record<string, string>) {
  const r = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: { message: string }[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const PUT = 'mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) { template { name } } }';
const CREATE = 'mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name } } }';
const bootSet = (o: Record<string, unknown>) => ({
  bootSets: [{ name: 'compute', path: c.world.defaultImage.manifest, type: 's3', ...o }],
  cfs: { configuration: 'compute-cfg' },
});
/** PCS transitions of any operation requested for a node. */
const transitions = (id: string) =>
  [...c.world.counters.transitions.keys()].reduce((n, op) => n + c.world.counters.transitionCount(op, id), 0);

beforeAll(async () => {
  c = await startCluster({ world: { nodes: 8, initial: { booted: true, desiredConfig: 'compute-cfg', configured: true } } });
  const auth = await testAuth(c.db.db);
  api = await startApiServer({
    db: c.db.db,
    scheduler: c.engine.scheduler,
    port: 0,
    host: '127.0.0.1',
    auth: auth.auth,
    images: c.adapters.images,
  });
  admin = auth.bearer(auth.adminToken);
  const ids = c.world.ids().sort();
  A = ids.slice(0, 4);
  B = ids.slice(4, 6);
  await gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: A }, admin);
  await gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "bolt", xnames: $x) { name } }', { x: B }, admin);
  acme = auth.bearer(await auth.token('operator', { tenant: 'acme', subject: 'ann' }));
});
afterAll(async () => {
  await api?.close();
  await c?.close();
});

describe('tenant sessions', () => {
  test("a node list naming another tenant's node fails setup with a clear error; no node is touched", async () => {
    await gql(PUT, { n: 'foreign', i: bootSet({ nodeList: [A[0], B[0]] }) }, acme);
    await gql(CREATE, { i: { operation: 'REBOOT', templateName: 'foreign', name: 'foreign-s' } }, acme);
    const s = await c.waitForSession('foreign-s');
    expect(s.error).toBe(`Boot set compute names nodes which do not exist or are not available to tenant acme: ${B[0]}`);
    const status = await gql('{ session(name: "foreign-s") { status { status error } } }', {}, acme);
    expect(status.session.status).toEqual({ status: 'COMPLETE', error: s.error });
    for (const id of c.world.ids()) expect(transitions(id), id).toBe(0);
  });

  test("a group spanning every tenant reboots only the tenant's own nodes", async () => {
    await gql(PUT, { n: 'cabinet', i: bootSet({ nodeGroups: ['cab-x1000'] }) }, acme);
    await gql(CREATE, { i: { operation: 'REBOOT', templateName: 'cabinet', name: 'cabinet-s' } }, acme);
    const s = await c.waitForSession('cabinet-s', 60_000);
    expect(s.error).toBeNull();
    expect(s.components.split(',').sort()).toEqual(A);
    for (const id of A) expect(c.world.counters.transitionCount('On', id), id).toBe(1);
    for (const id of c.world.ids().filter((x) => !A.includes(x))) expect(transitions(id), id).toBe(0);
    const seen = await gql('{ components { nodes { id session } } }', {}, acme);
    expect(seen.components.nodes).toEqual(A.map((id) => ({ id, session: 'cabinet-s' })));
  });
});
