/**
 * The BOS v2 REST door over real HTTP: session templates, sessions, options, version and health, as the
 * cray CLI and SAT call them (bos-clients.md rows 1-4, 10, 11). Every exchange is checked against
 * bos-v2.openapi.yaml at the end of each test.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from '../integration/api-harness.ts';
import { bosClient, loadBosContract, type BosClient } from './bos-client.ts';

let h: Harness;
let bos: BosClient;
/** The in-mesh form, `/v2/...` without the gateway prefix. */
let mesh: BosClient;

const TEMPLATE = {
  description: 'compute nodes',
  enable_cfs: true,
  cfs: { configuration: 'compute-cfg' },
  boot_sets: {
    compute: {
      path: 's3://boot-images/abc/manifest.json',
      type: 's3',
      node_list: ['x1000c0s0b0n0', 'x1000c0s0b0n1'],
      kernel_parameters: 'console=ttyS0',
      rootfs_provider: 'sbps',
      rootfs_provider_passthrough: 'dvs:api-gw-service-nmn.local:300:nmn0',
    },
  },
};
const NAIVE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

beforeAll(async () => {
  await loadBosContract();
  h = await startHarness();
  bos = bosClient(`${h.server.baseUrl}/apis/bos`, h.auth.bearer(h.auth.adminToken));
  mesh = bosClient(h.server.baseUrl, h.auth.bearer(h.auth.adminToken));
});
afterAll(async () => {
  await h?.close();
});
afterEach(async () => {
  const found = [...(await bos.violations()), ...(await mesh.violations())];
  bos.exchanges.length = 0;
  mesh.exchanges.length = 0;
  expect(found).toEqual([]);
});

describe('session templates', () => {
  test('row 1: PUT without a name answers 200 with the stored template, name added, arch defaulted', async () => {
    const r = await bos.req('PUT', '/v2/sessiontemplates/compute-t', { body: TEMPLATE });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      name: 'compute-t',
      tenant: null,
      description: 'compute nodes',
      enable_cfs: true,
      cfs: { configuration: 'compute-cfg' },
      boot_sets: { compute: { ...TEMPLATE.boot_sets.compute, arch: 'X86' } },
    });
  });

  test('row 2: list, get, delete (204), then gone from the list and 404 with a JSON detail', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/to-delete', { body: TEMPLATE });
    const list = await bos.req('GET', '/v2/sessiontemplates');
    expect(list.status).toBe(200);
    expect(list.body.map((t: { name: string }) => t.name)).toContain('to-delete');
    expect((await mesh.req('GET', '/v2/sessiontemplates/to-delete')).body.name).toBe('to-delete');
    expect((await bos.req('DELETE', '/v2/sessiontemplates/to-delete')).status).toBe(204);
    expect((await bos.req('GET', '/v2/sessiontemplates')).body.map((t: { name: string }) => t.name)).not.toContain('to-delete');
    const gone = await bos.req('GET', '/v2/sessiontemplates/to-delete');
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(gone.body).toMatchObject({ status: 404, title: 'The resource was not found', detail: expect.stringContaining('to-delete') });
    expect((await bos.req('DELETE', '/v2/sessiontemplates/to-delete')).status).toBe(404);
  });

  test('PATCH deep-merges (cfs, boot sets per key) and answers the whole template', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/patched', { body: TEMPLATE });
    // The contract's patch schema holds whole boot sets (path and type required); their fields merge into the stored ones.
    const bootSet = { path: TEMPLATE.boot_sets.compute.path, type: 's3', kernel_parameters: 'quiet' };
    const r = await bos.req('PATCH', '/v2/sessiontemplates/patched', { body: { description: 'new', boot_sets: { compute: bootSet } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      description: 'new',
      cfs: { configuration: 'compute-cfg' },
      boot_sets: { compute: { kernel_parameters: 'quiet', node_list: TEMPLATE.boot_sets.compute.node_list } },
    });
    expect((await bos.req('PATCH', '/v2/sessiontemplates/nope', { body: { description: 'x' } })).status).toBe(404);
  });

  test('bad templates are 400 problems naming the field in BOS spelling', async () => {
    const noHw = await bos.req('PUT', '/v2/sessiontemplates/bad', {
      body: { boot_sets: { compute: { path: 'p', type: 's3' } } },
      check: false,
    });
    expect(noHw.status).toBe(400);
    expect(noHw.body).toMatchObject({
      title: 'Bad Request',
      status: 400,
      detail: expect.stringContaining('boot_sets.compute: must have at least one of node_list'),
    });
    const badNode = await bos.req('PUT', '/v2/sessiontemplates/bad', {
      body: { boot_sets: { bs: { path: 'p', type: 's3', node_list: ['x1000c0s0b0n0', 'bogus'] } } },
      check: false,
    });
    expect(badNode.status).toBe(400);
    expect(badNode.body.detail).toMatch(/boot_sets\.bs\.node_list\[1\]/);
    const unknown = await bos.req('PUT', '/v2/sessiontemplates/bad', { body: { ...TEMPLATE, colour: 'red' }, check: false });
    expect(unknown.body).toMatchObject({ status: 400, detail: 'colour: is not a field of this object' });
    const wrongName = await bos.req('PUT', '/v2/sessiontemplates/bad', {
      body: { boot_sets: { a: { ...TEMPLATE.boot_sets.compute, name: 'b' } } },
      check: false,
    });
    expect(wrongName.body.detail).toMatch(/^boot_sets\.a\.name: must be the boot set's key/);
    const notJson = await bos.req('PUT', '/v2/sessiontemplates/bad', { raw: '{"boot_sets":', check: false });
    expect(notJson.body).toMatchObject({ status: 400, detail: expect.stringMatching(/not valid JSON/) });
    expect((await bos.req('GET', '/v2/sessiontemplates')).body.map((t: { name: string }) => t.name)).not.toContain('bad');
  });

  test('sessiontemplatesvalid answers a JSON string; sessiontemplatetemplate an example', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/valid-one', { body: TEMPLATE });
    const v = await bos.req('GET', '/v2/sessiontemplatesvalid/valid-one');
    expect(v).toMatchObject({ status: 200, body: 'Valid' });
    expect((await bos.req('GET', '/v2/sessiontemplatesvalid/none')).status).toBe(404);
    const ex = await bos.req('GET', '/v2/sessiontemplatetemplate');
    expect(ex.status).toBe(200);
    expect(Object.keys(ex.body.boot_sets).length).toBeGreaterThan(0);
  });
});

describe('sessions', () => {
  test('row 3: POST answers 201 with the session; row 4: list with filters, get, status, delete (204 then 404)', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/st', { body: TEMPLATE });
    const c = await bos.req('POST', '/v2/sessions', {
      body: { name: 's1', operation: 'reboot', template_name: 'st', limit: 'x1000c0s0b0n0' },
    });
    expect(c.status).toBe(201);
    expect(c.body).toEqual({
      name: 's1',
      operation: 'reboot',
      template_name: 'st',
      limit: 'x1000c0s0b0n0',
      stage: false,
      components: '',
      include_disabled: false,
      status: { status: 'pending', start_time: expect.stringMatching(NAIVE_TIME), end_time: null, error: null },
    });
    const generated = await bos.req('POST', '/v2/sessions', { body: { operation: 'boot', template_name: 'st', stage: true } });
    expect(generated.body.name).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.body.stage).toBe(true);

    expect((await bos.req('GET', '/v2/sessions')).body.map((s: { name: string }) => s.name).sort()).toEqual(
      [generated.body.name, 's1'].sort(),
    );
    expect((await bos.req('GET', '/v2/sessions?status=pending&max_age=1h')).body).toHaveLength(2);
    expect((await bos.req('GET', '/v2/sessions?status=complete')).body).toEqual([]);
    expect((await bos.req('GET', '/v2/sessions?min_age=1d')).body).toEqual([]);
    expect((await bos.req('GET', '/v2/sessions/s1')).body.name).toBe('s1');

    const st = await bos.req('GET', '/v2/sessions/s1/status');
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({
      status: 'pending',
      managed_components_count: 0,
      percent_successful: 0,
      percent_failed: 0,
      percent_staged: 0,
      phases: { percent_complete: 0, percent_powering_on: 0, percent_powering_off: 0, percent_configuring: 0 },
      error_summary: {},
      timing: { start_time: expect.stringMatching(NAIVE_TIME), end_time: null, duration: expect.stringMatching(/^\d+:\d\d:\d\d$/) },
    });

    expect((await bos.req('DELETE', '/v2/sessions/s1')).status).toBe(204);
    expect((await bos.req('GET', '/v2/sessions/s1')).status).toBe(404);
    expect((await bos.req('GET', '/v2/sessions/s1/status')).status).toBe(404);
    expect((await bos.req('DELETE', '/v2/sessions/s1')).status).toBe(404);
    expect((await bos.req('DELETE', '/v2/sessions?status=pending')).status).toBe(204);
    expect((await bos.req('GET', '/v2/sessions')).body).toEqual([]);
  });

  test('the extended status counts components and groups errors as BOS does', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/st2', { body: TEMPLATE });
    await bos.req('POST', '/v2/sessions', { body: { name: 's2', operation: 'boot', template_name: 'st2' } });
    await h.db.db.execute(sql`insert into components (id, session, enabled, phase, error) values
      ('x1000c0s0b0n0', 's2', false, '', ''), ('x1000c0s0b0n1', 's2', true, 'powering_on', 'pcs said no')`);
    const st = await bos.req('GET', '/v2/sessions/s2/status');
    expect(st.body).toMatchObject({
      managed_components_count: 2,
      percent_successful: 50,
      phases: { percent_complete: 50, percent_powering_on: 50 },
      error_summary: { 'pcs said no': { count: 1, list: 'x1000c0s0b0n1' } },
    });
    await h.db.db.execute(sql`delete from components`);
  });

  test('400 for a missing template, a bad operation, a bad age; 409 AlreadyExists for a name taken', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/st3', { body: TEMPLATE });
    const noT = await bos.req('POST', '/v2/sessions', { body: { operation: 'boot', template_name: 'missing' } });
    expect(noT.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^template_name: Session Template Name invalid/) });
    const op = await bos.req('POST', '/v2/sessions', { body: { operation: 'explode', template_name: 'st3' }, check: false });
    expect(op.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^operation: must be one of boot, reboot, shutdown/) });
    const age = await bos.req('GET', '/v2/sessions?min_age=soon', { check: false });
    expect(age.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^min_age: must be an age/) });
    await bos.req('POST', '/v2/sessions', { body: { name: 'dup', operation: 'boot', template_name: 'st3' } });
    const dup = await bos.req('POST', '/v2/sessions', { body: { name: 'dup', operation: 'boot', template_name: 'st3' } });
    expect(dup.body).toMatchObject({ status: 409, title: 'The resource to be created already exists' });
  });

  test('the BOS-internal session calls: PATCH is refused (400), POST status answers the session', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/st4', { body: TEMPLATE });
    await bos.req('POST', '/v2/sessions', { body: { name: 's4', operation: 'boot', template_name: 'st4' } });
    expect((await bos.req('PATCH', '/v2/sessions/s4', { body: { status: { status: 'complete' } } })).status).toBe(400);
    expect((await bos.req('PATCH', '/v2/sessions/none', { body: { status: { status: 'complete' } } })).status).toBe(404);
    expect((await bos.req('POST', '/v2/sessions/s4/status')).body.name).toBe('s4');
    expect((await bos.req('GET', '/v2/sessions/s4')).body.status.status).toBe('pending');
  });
});

describe('one code path for both doors', () => {
  test('an option set through REST binds GraphQL, and both doors refuse with the same rule and words', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/both', { body: TEMPLATE });
    expect((await bos.req('PATCH', '/v2/options', { body: { session_limit_required: true } })).status).toBe(200);
    try {
      const rest = await bos.req('POST', '/v2/sessions', { body: { operation: 'boot', template_name: 'both' } });
      const gql = await h.gql('mutation { createSession(input: {operation: BOOT, templateName: "both"}) { session { name } } }');
      const issue = gql.errors?.[0]?.extensions?.issues?.[0];
      expect(issue?.field).toBe('limit');
      expect(rest.body).toMatchObject({ status: 400, detail: `limit: ${issue?.message}` });
      // And a template made through one door is the other's: GraphQL sees the REST template, with its boot set.
      const t = await h.ok('{ sessionTemplate(name: "both") { bootSets { name nodeList } } }');
      expect(t.sessionTemplate.bootSets).toEqual([{ name: 'compute', nodeList: TEMPLATE.boot_sets.compute.node_list }]);
    } finally {
      await bos.req('PATCH', '/v2/options', { body: { session_limit_required: false } });
    }
  });
});

describe('options, version, health', () => {
  test('row 10: GET options with BOS names; PATCH merges and answers every option; a bad value is 400 naming it', async () => {
    const o = await bos.req('GET', '/v2/options');
    expect(o.body).toMatchObject({
      polling_frequency: 15,
      default_retry_policy: 3,
      max_component_batch_size: 2800,
      cleanup_completed_session_ttl: '7d',
      // bootorch's own options too (V2Options allows additional properties).
      job_retry_delay: 1,
      job_retry_backoff: true,
      job_retry_max_delay: 5,
    });
    const p = await bos.req('PATCH', '/v2/options', { body: { default_retry_policy: 5, logging_level: 'DEBUG', job_retry_delay: 2 } });
    expect(p.body).toMatchObject({ default_retry_policy: 5, logging_level: 'DEBUG', polling_frequency: 15, job_retry_delay: 2 });
    expect((await bos.req('GET', '/v2/options')).body.default_retry_policy).toBe(5);
    const bad = await bos.req('PATCH', '/v2/options', { body: { bss_read_timeout: 1 }, check: false });
    expect(bad.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^bss_read_timeout: /) });
    const badRetry = await bos.req('PATCH', '/v2/options', { body: { job_retry_max_delay: 0 }, check: false });
    expect(badRetry.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^job_retry_max_delay: /) });
  });

  test('row 11: version, healthz and the versions document, at the gateway and in-mesh paths', async () => {
    const v = await bos.req('GET', '/v2/version');
    expect(v.body).toMatchObject({ major: expect.stringMatching(/^\d+$/), minor: expect.any(String), patch: expect.any(String) });
    expect((await mesh.req('GET', '/v2')).body).toEqual({
      ...v.body,
      links: [
        { href: '/v2', rel: 'self' },
        { href: '/', rel: 'versions' },
      ],
    });
    expect((await bos.req('GET', '/v2/healthz')).body).toEqual({ dbStatus: 'ok', apiStatus: 'ok' });
    const root = await mesh.req('GET', '/');
    expect(root.status).toBe(200);
    expect(root.body[0]).toMatchObject({ major: v.body.major });
    expect((await bos.req('GET', '/')).body).toEqual(root.body);
  });

  test('an unknown path is 404 and a wrong method 405, both problem documents', async () => {
    const r = await bos.req('GET', '/v2/nothing', { check: false });
    expect(r).toMatchObject({ status: 404, body: { status: 404 } });
    const m = await bos.req('POST', '/v2/options', { body: {}, check: false });
    expect(m.status).toBe(405);
    expect(m.headers.get('allow')).toBe('GET, PATCH');
  });
});
