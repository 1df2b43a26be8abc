/** Sessions over real HTTP: BOS's create-time checks, the session-setup kick, list/age filters, deletes, tenancy. */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { errorOf, startHarness, type Harness } from './api-harness.ts';
import { startApiServer } from '../../src/api/server.ts';
import type { ImagesPort } from '../../src/adapters/ports.ts';

let h: Harness;
const compute = { name: 'compute', path: 's3://boot-images/abc/manifest.json', type: 's3', nodeList: ['x3000c0s19b1n0'] };
const PUT = `mutation($name: String!, $input: SessionTemplateInput!) { putSessionTemplate(name: $name, input: $input) { template { name } } }`;
const CREATE = `mutation($input: CreateSessionInput!) { createSession(input: $input) {
  session { name tenant operation templateName limit stage includeDisabled components createdBy paused aborted
    status { status startTime endTime error } rollout { maxInFlight canary failureBudget } }
  warnings { field message } } }`;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) values ('vcluster-a', 'x3000c0s19b1n0')`);
  await h.ok(PUT, { name: 'cos', input: { bootSets: [compute], rollout: { maxInFlight: '10%', canary: 2 } } });
  await h.ok(PUT, { name: 'http', input: { bootSets: [{ ...compute, type: 'http' }] } });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.scheduler.clear());

const setOptions = (patch: Record<string, unknown>) =>
  h.ok(`mutation($p: OptionsPatchInput!) { patchOptions(patch: $p) { rejectNids } }`, { p: patch });

describe('createSession', () => {
  test('stores a pending session and kicks session-setup in the same transaction', async () => {
    const r = await h.ok(CREATE, {
      input: { operation: 'REBOOT', templateName: 'cos', limit: 'x3000c0s19b1n0', rollout: { canary: 5, failureBudget: '1%' } },
    });
    const s = r.createSession.session;
    expect(s.name).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(s).toMatchObject({
      tenant: null,
      operation: 'REBOOT',
      templateName: 'cos',
      limit: 'x3000c0s19b1n0',
      stage: false,
      includeDisabled: false,
      components: [],
      createdBy: 'tester',
      paused: false,
      aborted: false,
      status: { status: 'PENDING', endTime: null, error: null },
      rollout: { maxInFlight: '10%', canary: 5, failureBudget: '1%' },
    });
    expect(h.scheduler.committed).toEqual([['session-setup']]);
    const row = await h.db.db.execute(sql`select status, operation, "limit", rollout from sessions where name = ${s.name}`);
    expect(row.rows[0]).toMatchObject({
      status: 'pending',
      operation: 'reboot',
      rollout: { maxInFlight: '10%', canary: 5, failureBudget: '1%' },
    });
  });

  test("the job retry fields merge over the template's, field by field", async () => {
    await h.ok(PUT, { name: 'retry', input: { bootSets: [compute], rollout: { jobRetryDelay: 1, jobRetryMaxDelay: 30 } } });
    const r = await h.ok(
      `mutation($input: CreateSessionInput!) { createSession(input: $input) {
        session { name rollout { jobRetryDelay jobRetryBackoff jobRetryMaxDelay } } } }`,
      { input: { operation: 'BOOT', templateName: 'retry', rollout: { jobRetryDelay: 2, jobRetryBackoff: false } } },
    );
    expect(r.createSession.session.rollout).toEqual({ jobRetryDelay: 2, jobRetryBackoff: false, jobRetryMaxDelay: 30 });
  });

  test('a taken name is CONFLICT and kicks nothing', async () => {
    await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name: 'dup' } });
    h.scheduler.clear();
    const r = await h.gql(CREATE, { input: { operation: 'SHUTDOWN', templateName: 'cos', name: 'dup' } });
    expect(errorOf(r)).toMatchObject({ code: 'CONFLICT', field: 'name' });
    expect(h.scheduler.committed).toEqual([]);
  });

  test.each<[string, Record<string, unknown>, string, RegExp]>([
    ['bad name', { name: 'no spaces' }, 'name', /letter or digit/],
    ['missing template', { templateName: 'nope' }, 'templateName', /Session Template Name invalid/],
    ['bad template name', { templateName: '-x' }, 'templateName', /letter or digit/],
    ['limit syntax', { limit: 'x3000c0s19b1n0,,x1' }, 'limit', /token 2 is empty/],
    ['limit operator without name', { limit: 'all,!' }, 'limit', /operator but no name/],
    ['limit too long', { limit: 'x'.repeat(524_289) }, 'limit', /at most 524288/],
    [
      'template fails its boot set checks',
      { templateName: 'http' },
      'templateName',
      /Session template fails check: templateName: bootSets.compute.type: boot set type "http" is not supported/,
    ],
    ['rollout', { rollout: { maxInFlight: '0' } }, 'rollout.maxInFlight', /count/],
    ['rollout job retry delay', { rollout: { jobRetryDelay: 0 } }, 'rollout.jobRetryDelay', /at least 1/],
    ['rollout job retry cap', { rollout: { jobRetryMaxDelay: 86_401 } }, 'rollout.jobRetryMaxDelay', /at most 86400/],
  ])('%s -> BAD_USER_INPUT at %s', async (_n, over, field, message) => {
    const r = await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos', ...over } });
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(errorOf(r).message).toMatch(message);
    expect(h.scheduler.committed).toEqual([]);
  });

  test('a shutdown does not need readable boot sets', async () => {
    const r = await h.ok(CREATE, { input: { operation: 'SHUTDOWN', templateName: 'http' } });
    expect(r.createSession.session.operation).toBe('SHUTDOWN');
  });

  test('session_limit_required: an empty limit fails, * passes', async () => {
    await setOptions({ sessionLimitRequired: true });
    try {
      expect(errorOf(await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos' } }))).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'limit',
      });
      expect(errorOf(await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos', limit: '  ' } })).field).toBe('limit');
      const r = await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', limit: '*' } });
      expect(r.createSession.session.limit).toBe('*');
    } finally {
      await setOptions({ sessionLimitRequired: false });
    }
  });

  test('NID-like limit tokens warn, or fail with reject_nids', async () => {
    const warned = await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', limit: 'x3000c0s19b1n0,!nid000001' } });
    expect(warned.createSession.warnings).toEqual([{ field: 'limit', message: expect.stringMatching(/token 2 .* NID/) }]);
    await setOptions({ rejectNids: true });
    try {
      expect(errorOf(await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos', limit: 'nid000001' } }))).toMatchObject({
        code: 'BAD_USER_INPUT',
        field: 'limit',
      });
    } finally {
      await setOptions({ rejectNids: false });
    }
  });

  test('image manifests are checked when the server has an images port', async () => {
    const images: ImagesPort = {
      async resolve(path) {
        if (path.includes('missing')) throw new Error('NoSuchKey');
        return {
          kernel: 'k',
          initrd: path.includes('noinitrd') ? '' : 'i',
          bootParameters: '',
          arch: path.includes('arm') ? 'aarch64' : 'x86_64',
        };
      },
    };
    const server = await startApiServer({ db: h.db.db, scheduler: h.scheduler, port: 0, host: '127.0.0.1', images, auth: h.auth.auth });
    const call = async (query: string, variables: Record<string, unknown>) =>
      (
        await fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...h.auth.bearer(h.auth.adminToken) },
          body: JSON.stringify({ query, variables }),
        })
      ).json() as Promise<{ data?: any; errors?: any[] }>;
    try {
      for (const [name, path] of [
        ['missing', 's3://b/missing/manifest.json'],
        ['arm', 's3://b/arm/manifest.json'],
        ['noinitrd', 's3://b/noinitrd/manifest.json'],
      ]) {
        await h.ok(PUT, { name: `img-${name}`, input: { bootSets: [{ ...compute, path }] } });
      }
      const missing = await call(CREATE, { input: { operation: 'BOOT', templateName: 'img-missing' } });
      expect(missing.errors![0].message).toMatch(/bootSets.compute.path: cannot read the image manifest: NoSuchKey/);
      const arm = await call(CREATE, { input: { operation: 'REBOOT', templateName: 'img-arm' } });
      expect(arm.errors![0].message).toMatch(/bootSets.compute.arch: boot set arch X86 needs an x86_64 image; this image is aarch64/);
      const noInitrd = await call(CREATE, { input: { operation: 'BOOT', templateName: 'img-noinitrd' } });
      expect(noInitrd.data.createSession.warnings).toEqual([
        { field: 'bootSets.compute.path', message: 'the image manifest names no initrd' },
      ]);
      const v = await call(`{ validateSessionTemplate(name: "img-missing") { valid errors { field } } }`, {});
      expect(v.data.validateSessionTemplate).toEqual({ valid: false, errors: [{ field: 'bootSets.compute.path' }] });
    } finally {
      await server.close();
    }
  });
});

describe('list, get, delete', () => {
  const LIST = `query($s: SessionState, $min: String, $max: String) { sessions(status: $s, minAge: $min, maxAge: $max) { name status { status } } }`;
  test('status and age filters (age from start time)', async () => {
    await h.db.db.execute(sql`delete from sessions`);
    for (const [name, status, hoursAgo] of [
      ['old-done', 'complete', 48],
      ['new-done', 'complete', 1],
      ['running', 'running', 3],
    ] as const) {
      await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name } });
      await h.db.db.execute(
        sql`update sessions set status = ${status}, start_time = now() - make_interval(hours => ${hoursAgo}) where name = ${name}`,
      );
    }
    const names = async (v: Record<string, unknown>) => (await h.ok(LIST, v)).sessions.map((s: { name: string }) => s.name);
    expect(await names({})).toEqual(['old-done', 'running', 'new-done']);
    expect(await names({ s: 'COMPLETE' })).toEqual(['old-done', 'new-done']);
    expect(await names({ min: '1d' })).toEqual(['old-done']);
    expect(await names({ max: '2H' })).toEqual(['new-done']);
    expect(await names({ min: '2h', max: '1w' })).toEqual(['old-done', 'running']);
    expect(errorOf(await h.gql(LIST, { min: '3 days' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'minAge' });

    expect(await h.ok(`{ session(name: "running") { name } nope: session(name: "nope") { name } }`)).toEqual({
      session: { name: 'running' },
      nope: null,
    });

    const del = await h.ok(`mutation { deleteSessions(status: COMPLETE, minAge: "1d") { count names } }`);
    expect(del.deleteSessions).toEqual({ count: 1, names: ['old-done'] });
    expect(await h.ok(`mutation { deleteSession(name: "running") }`)).toEqual({ deleteSession: true });
    expect(errorOf(await h.gql(`mutation { deleteSession(name: "running") }`)).code).toBe('NOT_FOUND');
    expect(await names({})).toEqual(['new-done']);
  });

  test('deleting a session drops its saved status', async () => {
    await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name: 'snap' } });
    await h.db.db.execute(sql`insert into session_status_snapshots (tenant_key, name, data) values ('', 'snap', '{}')`);
    await h.ok(`mutation { deleteSession(name: "snap") }`);
    const left = await h.db.db.execute(sql`select count(*)::int as n from session_status_snapshots where name = 'snap'`);
    expect(left.rows[0]).toEqual({ n: 0 });
  });
});

describe('tenancy', () => {
  const as = { 'Cray-Tenant-Name': 'vcluster-a' };
  test('sessions are namespaced; the template must exist for the tenant; deletes use the caller namespace', async () => {
    expect(errorOf(await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name: 't1' } }, as)).field).toBe('templateName');
    await h.ok(PUT, { name: 'cos', input: { bootSets: [compute] } }, as);
    const r = await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name: 't1' } }, as);
    expect(r.createSession.session.tenant).toBe('vcluster-a');
    await h.ok(CREATE, { input: { operation: 'BOOT', templateName: 'cos', name: 't1' } });
    const mine = await h.ok(`{ sessions { name tenant } }`, {}, as);
    expect(mine.sessions).toEqual([{ name: 't1', tenant: 'vcluster-a' }]);
    const all = await h.ok(`{ sessions { name tenant } }`);
    expect(all.sessions.filter((s: { name: string }) => s.name === 't1')).toHaveLength(2);
    const del = await h.ok(`mutation { deleteSessions { names } }`);
    expect(del.deleteSessions.names).toContain('t1');
    expect((await h.ok(`{ sessions { name tenant } }`)).sessions).toEqual([{ name: 't1', tenant: 'vcluster-a' }]);
    expect(errorOf(await h.gql(CREATE, { input: { operation: 'BOOT', templateName: 'cos' } }, { 'Cray-Tenant-Name': 'ghost' })).field).toBe(
      'Cray-Tenant-Name',
    );
  });
});
