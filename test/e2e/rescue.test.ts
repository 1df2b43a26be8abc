/**
 * Rescue and unrescue end to end (docs/rescue.md), as a site operator drives them: the API over real
 * HTTP (admin and a tenant's operator), the in-process engine over the simulated cluster, the CLI as a
 * process. A RESCUE boots a node into its boot set's rescue image and leaves its desired state as it
 * was; a reboot leaves a rescued node out; an UNRESCUE boots it back into its desired state. Unhappy
 * paths: no rescue image (typed error naming the field), staged, another tenant's node, an HSM-locked
 * node, a node another session holds (taken over, as any session takes it), an unrescue of nodes that
 * are not rescued.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { testAuth } from '../helpers/auth.ts';
import { runCli } from '../helpers/processes.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';
import type { SimImage } from '../../src/sim/images.ts';

let c: Cluster;
let h: ClusterApi;
let admin: Record<string, string>;
let acme: Record<string, string>;
let adminToken = '';
let rescueImage: SimImage;
let A: string[];
let B: string[];

/** The whole answer, errors included, as the caller given. */
async function call(query: string, variables: Record<string, unknown>, headers = admin) {
  const r = await fetch(h.api.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string; field?: string } }[] };
}

async function gql(query: string, variables: Record<string, unknown> = {}, headers = admin) {
  const body = await call(query, variables, headers);
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const PUT = 'mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) { template { name } } }';
const CREATE = 'mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name operation } } }';
const PLAN = `query($i: CreateSessionInput!) { planSession(input: $i) { valid setupError errors { field message }
  bootSets { name kernel configuration } nodes { id action skipReason detail } } }`;
const COMPONENT = `query($id: ID!) { component(id: $id) { session enabled
  rescue { kernel kernelParameters initrd }
  desiredState { bootArtifacts { kernel kernelParameters initrd } configuration }
  actualState { bootArtifacts { kernel kernelParameters initrd } } status { status phase } } }`;

const component = async (id: string) => (await gql(COMPONENT, { id })).component;

/** A session through createSession, to its end; its row. */
async function run(name: string, operation: string, limit: string, templateName = 'compute', headers = admin) {
  await gql(CREATE, { i: { name, operation, templateName, limit } }, headers);
  return c.waitForSession(name, 90_000);
}

beforeAll(async () => {
  c = await startCluster({ world: { nodes: 8, initial: { booted: true, desiredConfig: 'compute-cfg', configured: true } } });
  rescueImage = c.world.images.addImage({ kernelParameters: 'console=ttyS0,115200 rescue.shell=1' });
  h = await startClusterApi(c);
  const auth = await testAuth(c.db.db);
  adminToken = auth.adminToken;
  admin = auth.bearer(adminToken);
  acme = auth.bearer(await auth.token('operator', { tenant: 'acme', subject: 'ann' }));
  const ids = c.world.ids().sort();
  A = ids.slice(0, 6);
  B = ids.slice(6, 8);
  await gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "bolt", xnames: $x) { name } }', { x: B });
  await gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: A.slice(4) });
  const bootSet = { name: 'compute', path: c.world.defaultImage.manifest, type: 's3', kernelParameters: 'console=ttyS0,115200' };
  const cfs = { configuration: 'compute-cfg' };
  await gql(PUT, { n: 'compute', i: { bootSets: [{ ...bootSet, nodeList: ids, rescueImage: rescueImage.manifest }], cfs } });
  await gql(PUT, { n: 'plain', i: { bootSets: [{ ...bootSet, nodeList: ids }], cfs } });
  await gql(PUT, { n: 'theirs', i: { bootSets: [{ ...bootSet, nodeList: B, rescueImage: rescueImage.manifest }] } }, acme);
  // Every node gets its desired state from a reboot first.
  expect((await run('r0', 'REBOOT', '')).error).toBeNull();
}, 180_000);

afterAll(async () => {
  await h?.api.close();
  await c?.close();
});

describe('rescue and unrescue', { timeout: 300_000 }, () => {
  test('a rescue boots the rescue image, keeps the desired state, and is shown on the node and in the events', async () => {
    const id = A[0]!;
    const before = await component(id);
    const p = (await gql(PLAN, { i: { operation: 'RESCUE', templateName: 'compute', limit: id } })).planSession;
    expect(p.valid).toBe(true);
    expect(p.bootSets).toEqual([{ name: 'compute', kernel: rescueImage.kernel, configuration: '' }]);
    expect(p.nodes.find((n: { id: string }) => n.id === id)).toMatchObject({ action: 'POWER_CYCLE', skipReason: null });

    const s = await run('rescue1', 'RESCUE', id);
    expect(s.error).toBeNull();
    expect(s.components).toBe(id);
    const after = await component(id);
    const params = `console=ttyS0,115200 rescue.shell=1 bos_update_frequency=4h bootorch_rescue=1`;
    expect(after.rescue).toEqual({ kernel: rescueImage.kernel, kernelParameters: params, initrd: rescueImage.initrd });
    expect(after.actualState.bootArtifacts).toEqual(after.rescue);
    expect(after.desiredState).toEqual(before.desiredState);
    expect(after).toMatchObject({ session: 'rescue1', enabled: false, status: { status: 'STABLE', phase: 'NONE' } });
    const status = (await gql('query { sessionStatus(name: "rescue1") { percentSuccessful result } }')).sessionStatus;
    expect(status).toEqual({ percentSuccessful: 100, result: 'COMPLETE' });
    const events = await c.events({ session: 'rescue1', component: id });
    expect(events.find((e) => e.kind === 'setup')?.data).toMatchObject({ operation: 'rescue', kernel: rescueImage.kernel });
    expect(events.filter((e) => e.kind === 'action').map((e) => e.action)).toEqual(
      expect.arrayContaining(['powering_off_gracefully', 'powering_on']),
    );
    expect(events.some((e) => e.kind === 'report')).toBe(true);
    // CFS was given no configuration for the rescue.
    expect((await c.adapters.config.getComponents([id]))[0]?.desiredConfig).toBe('');
  });

  test('a reboot leaves a rescued node out, and the dry run says why', async () => {
    const p = (await gql(PLAN, { i: { operation: 'REBOOT', templateName: 'compute', limit: A.slice(0, 2).join(',') } })).planSession;
    expect(p.nodes.find((n: { id: string }) => n.id === A[0])).toMatchObject({ action: 'SKIP', skipReason: 'RESCUED' });
    const s = await run('r1', 'REBOOT', A.slice(0, 2).join(','));
    expect(s.components).toBe(A[1]);
    expect((await component(A[0]!)).session).toBe('rescue1');
    const only = await run('r2', 'REBOOT', A[0]!);
    expect(only.error).toBe('All nodes found to act upon are rescued: unrescue them first (a reboot does not take a rescued node)');
  });

  test('an unrescue boots it back into its desired state and leaves out nodes that are not rescued', async () => {
    const id = A[0]!;
    const p = (await gql(PLAN, { i: { operation: 'UNRESCUE', templateName: 'compute', limit: `${id},${A[2]}` } })).planSession;
    expect(p.nodes.find((n: { id: string }) => n.id === A[2])).toMatchObject({ action: 'SKIP', skipReason: 'NOT_RESCUED' });
    const s = await run('unrescue1', 'UNRESCUE', `${id},${A[2]}`);
    expect(s.error).toBeNull();
    expect(s.components).toBe(id);
    const after = await component(id);
    expect(after.rescue).toBeNull();
    expect(after.actualState.bootArtifacts).toEqual(after.desiredState.bootArtifacts);
    expect(after.desiredState.bootArtifacts.kernel).toBe(c.world.defaultImage.kernel);
    expect(after).toMatchObject({ session: 'unrescue1', status: { status: 'STABLE' } });
    const none = await run('unrescue2', 'UNRESCUE', id);
    expect(none.error).toBe('None of the nodes found to act upon is rescued');
  });

  test('no rescue image: a typed error naming the field; the option default_rescue_image gives one', async () => {
    const noImage = await call(CREATE, { i: { operation: 'RESCUE', templateName: 'plain', limit: A[1] } });
    expect(noImage.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'templateName' });
    expect(noImage.errors?.[0]?.message).toBe(
      "Session template fails check: templateName: bootSets.compute.rescueImage: no rescue image: set the boot set's rescueImage or the option default_rescue_image",
    );
    expect((await c.db.pool.query("select count(*)::int as n from sessions where operation = 'rescue'")).rows[0].n).toBe(1);
    // An unrescue needs none.
    expect((await gql(PLAN, { i: { operation: 'UNRESCUE', templateName: 'plain', limit: A[1] } })).planSession.valid).toBe(true);

    await gql('mutation($m: String!) { patchOptions(patch: { defaultRescueImage: $m }) { defaultRescueImage } }', {
      m: rescueImage.manifest,
    });
    const withDefault = (await gql(PLAN, { i: { operation: 'RESCUE', templateName: 'plain', limit: A[1] } })).planSession;
    expect(withDefault).toMatchObject({ valid: true, bootSets: [{ kernel: rescueImage.kernel }] });
    await gql('mutation { patchOptions(patch: { defaultRescueImage: "" }) { defaultRescueImage } }');

    const staged = await call(CREATE, { i: { operation: 'RESCUE', templateName: 'compute', limit: A[1], stage: true } });
    expect(staged.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'stage' });
  });

  test("a tenant cannot rescue another tenant's node; an HSM-locked node is left out", async () => {
    const theirs = await run('acme-rescue', 'RESCUE', '', 'theirs', acme);
    expect(theirs.error).toBe(`Boot set compute names nodes which do not exist or are not available to tenant acme: ${B.join(',')}`);
    for (const id of B) expect((await component(id)).rescue).toBeNull();

    c.world.setLocked([A[3]!]);
    const p = (await gql(PLAN, { i: { operation: 'RESCUE', templateName: 'compute', limit: `${A[3]},${A[4]}` } })).planSession;
    expect(p.nodes.find((n: { id: string }) => n.id === A[3])).toMatchObject({ action: 'SKIP', skipReason: 'LOCKED' });
    c.world.setLocked([A[3]!], false);
  });

  test('a rescue under a rollout policy is admitted by it; explain says where a rescued node stands', async () => {
    const ids = [A[1]!, A[2]!];
    await gql(CREATE, {
      i: { name: 'rescue-rollout', operation: 'RESCUE', templateName: 'compute', limit: ids.join(','), rollout: { maxInFlight: '1' } },
    });
    const s = await c.waitForSession('rescue-rollout', 90_000);
    expect(s.error).toBeNull();
    expect((await gql('query { session(name: "rescue-rollout") { rollout { maxInFlight } } }')).session.rollout).toEqual({
      maxInFlight: '1',
    });
    const events = await c.events({ session: 'rescue-rollout' });
    // Both queued behind the in-flight limit at setup, then admitted one at a time.
    expect(events.filter((e) => e.kind === 'setup').map((e) => e.to_status)).toEqual(['queued', 'queued']);
    for (const id of ids) expect((await component(id)).rescue?.kernel).toBe(rescueImage.kernel);
    const x = (await gql('query($id: ID!) { explain(componentId: $id) { next suggestedAction } }', { id: ids[0] })).explain;
    expect(x).toEqual({
      next: 'Nothing: it runs its rescue image and stays there; an UNRESCUE session boots it back into its desired state (docs/rescue.md).',
      suggestedAction: 'NONE',
    });
    expect((await run('unrescue-rollout', 'UNRESCUE', ids.join(','))).components).toBe(ids.join(','));
  });

  test('a rescue takes a node another session holds, as every session does; the CLI starts one', async () => {
    const id = A[5]!;
    await gql(CREATE, { i: { name: 'held', operation: 'REBOOT', templateName: 'compute', limit: id } });
    await gql('mutation { pauseSession(name: "held", reason: "test") { name } }');
    await c.waitFor(async () => (await component(id)).session === 'held', 'held owns the node');

    const env = { BOOTORCH_URL: h.api.url, BOOTORCH_TOKEN: adminToken };
    const cli = await runCli(
      ['session', 'create', '--template', 'compute', '--operation', 'rescue', '--limit', id, '--name', 'rescue2'],
      env,
    );
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toBe(`session rescue2 created (rescue of compute, limit ${id})\n`);
    expect((await c.waitForSession('rescue2', 90_000)).error).toBeNull();
    expect(await component(id)).toMatchObject({ session: 'rescue2', rescue: { kernel: rescueImage.kernel } });
    const bad = await runCli(['session', 'create', '--template', 'compute', '--operation', 'rescue', '--limit', id, '--stage'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/stage: a rescue acts on the nodes now; it cannot be staged/);

    const back = await runCli(
      ['session', 'create', '--template', 'compute', '--operation', 'unrescue', '--limit', id, '--name', 'unrescue3', '--watch'],
      env,
    );
    expect(back.code).toBe(0);
    expect(back.stdout).toMatch(/Session unrescue3 complete in .*: 1 nodes?, 1 succeeded, 0 failed/);
    expect((await component(id)).rescue).toBeNull();
  });
});
