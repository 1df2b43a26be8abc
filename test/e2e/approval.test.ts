/**
 * Safer large operations: with approval_node_threshold set, a session over more nodes than it, or with
 * the limit `all`, waits before its first action until an admin other than its creator approves it
 * (the in-process engine over the simulated cluster, the API over real HTTP with real tokens). Its
 * creator and operators are refused; the wait shows on the session and its explanation; once approved
 * the session runs to the end. A small session needs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { testAuth } from '../helpers/auth.ts';
import { runCli } from '../helpers/processes.ts';

let c: Cluster;
let api: ApiServer;
const tokens: Record<'creator' | 'second' | 'operator', string> = { creator: '', second: '', operator: '' };

async function gqlAs(who: keyof typeof tokens, query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[who]}` },
    body: JSON.stringify({ query, variables }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the answer's shape from its own query.
  return (await r.json()) as { data?: any; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

async function gql(who: keyof typeof tokens, query: string, variables: Record<string, unknown> = {}) {
  const b = await gqlAs(who, query, variables);
  if (b.errors) throw new Error(JSON.stringify(b.errors));
  return b.data;
}

const create = (name: string, template: string, limit?: string) =>
  gql('creator', 'mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name } } }', {
    i: { name, operation: 'REBOOT', templateName: template, limit },
  });
const approval = async (name: string) =>
  (await gql('creator', 'query($n: String!) { session(name: $n) { approval { reason waiting approvedBy approvedAt } } }', { n: name }))
    .session.approval;

beforeAll(async () => {
  c = await startCluster({ options: { approval_node_threshold: 4 } });
  const auth = await testAuth(c.db.db, { adminSubject: 'admin-a' });
  tokens.creator = auth.adminToken;
  tokens.second = await auth.token('admin', { subject: 'admin-b' });
  tokens.operator = await auth.token('operator', { subject: 'op-1' });
  api = await startApiServer({
    db: c.db.db,
    scheduler: c.engine.scheduler,
    port: 0,
    host: '127.0.0.1',
    auth: auth.auth,
    adapters: c.adapters,
  });
  const ids = c.world.ids();
  await c.template('every', { nodes: ids });
  await c.template('pair', { nodes: ids.slice(0, 2) });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await c?.close();
});

describe('a large session waits for a second admin', { timeout: 240_000 }, () => {
  it('holds a session over more nodes than the threshold until another admin approves it', async () => {
    await create('big', 'every');
    await c.waitFor(async () => (await approval('big')) !== null, 'setup marks the session waiting for approval');
    const a = await approval('big');
    expect(a).toMatchObject({ waiting: true, approvedBy: null });
    expect(a.reason).toMatch(/^8 nodes, more than approval_node_threshold \(4\)/);
    // Nothing acted: still pending, no node given desired state, no event for the session.
    const s = await gql('creator', '{ session(name: "big") { status { status } } explainSession(name: "big") { approval { waiting } } }');
    expect(s.session.status.status).toBe('PENDING');
    expect(s.explainSession.approval.waiting).toBe(true);
    expect((await c.components()).filter((x) => x.session === 'big')).toEqual([]);
    expect(await c.events({ session: 'big' })).toEqual([]);

    const own = await gqlAs('creator', 'mutation { approveSession(name: "big") { name } }');
    expect(own.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(own.errors?.[0]?.message).toMatch(/admin-a created session big; another admin must approve it/);
    const operator = await gqlAs('operator', 'mutation { approveSession(name: "big") { name } }');
    expect(operator.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await approval('big')).toMatchObject({ waiting: true });

    const ok = await gql('second', 'mutation { approveSession(name: "big") { name approval { waiting approvedBy } } }');
    expect(ok.approveSession.approval).toEqual({ waiting: false, approvedBy: 'admin-b' });
    const again = await gqlAs('second', 'mutation { approveSession(name: "big") { name } }');
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const done = await c.waitForSession('big', 90_000);
    expect(done.error).toBeNull();
    expect(done.components.split(',')).toHaveLength(8);
  });

  it('holds a session whose limit is all, however small; a small session needs nothing', async () => {
    await create('all-pair', 'pair', 'all');
    await c.waitFor(async () => (await approval('all-pair')) !== null, 'limit all waits for approval');
    expect((await approval('all-pair')).reason).toMatch(/^limit "all"/);

    await create('small', 'pair');
    const done = await c.waitForSession('small', 90_000);
    expect(done.components.split(',')).toHaveLength(2);
    expect(await approval('small')).toBeNull();
    expect(await approval('all-pair')).toMatchObject({ waiting: true });
  });

  it('shows the wait and takes the approval in the CLI', async () => {
    const env = (who: keyof typeof tokens) => ({ BOOTORCH_URL: api.url, BOOTORCH_TOKEN: tokens[who] });
    const explained = await runCli(['session', 'explain', 'all-pair'], env('creator'));
    expect(explained.stdout).toMatch(/waits for a second admin's approval \(bootorch session approve all-pair\): limit "all"/);
    const approved = await runCli(['session', 'approve', 'all-pair'], env('second'));
    expect(approved.code).toBe(0);
    expect(approved.stdout).toBe('session all-pair approved by admin-b; its setup goes on\n');
    expect((await c.waitForSession('all-pair', 90_000)).components.split(',')).toHaveLength(2);
  });
});
