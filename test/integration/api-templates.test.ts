/** Session templates over real HTTP: CRUD, PATCH deep merge, validation errors naming their field, tenancy. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { errorOf, startHarness, type Harness } from './api-harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) values ('vcluster-a', 'x3000c0s19b1n0')`);
});
afterAll(async () => {
  await h?.close();
});

const T = `name tenant description enableCfs cfs { configuration } rollout { maxInFlight canary }
  bootSets { name path type etag kernelParameters nodeList nodeRolesGroups nodeGroups arch rootfsProvider rootfsProviderPassthrough cfs { configuration } }`;
const PUT = `mutation($name: String!, $input: SessionTemplateInput!) { putSessionTemplate(name: $name, input: $input) { template { ${T} } warnings { field message } } }`;
const PATCH = `mutation($name: String!, $patch: SessionTemplatePatchInput!) { patchSessionTemplate(name: $name, patch: $patch) { template { ${T} } warnings { field message } } }`;
const compute = {
  name: 'compute',
  path: 's3://boot-images/abc/manifest.json',
  type: 's3',
  nodeList: ['x3000c0s19b1n0'],
  kernelParameters: 'quiet',
};

describe('CRUD', () => {
  test('put creates with BOS defaults and canonical node names; get, list, delete', async () => {
    const put = await h.ok(PUT, {
      name: 'cos',
      input: {
        description: 'compute',
        cfs: { configuration: 'cfg' },
        rollout: { maxInFlight: '10%' },
        bootSets: [{ ...compute, nodeList: ['X3000C0S019B1N0'], cfs: { configuration: '' } }],
      },
    });
    expect(put.putSessionTemplate.warnings).toEqual([]);
    expect(put.putSessionTemplate.template).toMatchObject({
      name: 'cos',
      tenant: null,
      enableCfs: true,
      cfs: { configuration: 'cfg' },
      rollout: { maxInFlight: '10%', canary: null },
      bootSets: [{ name: 'compute', arch: 'X86', nodeList: ['x3000c0s19b1n0'], cfs: null, nodeGroups: null }],
    });
    const got = await h.ok(
      `query { sessionTemplate(name: "cos") { name description } sessionTemplates { name } missing: sessionTemplate(name: "nope") { name } }`,
    );
    expect(got).toEqual({ sessionTemplate: { name: 'cos', description: 'compute' }, sessionTemplates: [{ name: 'cos' }], missing: null });

    const replaced = await h.ok(PUT, { name: 'cos', input: { bootSets: [{ ...compute, nodeGroups: ['g'], nodeList: null }] } });
    expect(replaced.putSessionTemplate.template).toMatchObject({
      description: null,
      cfs: null,
      rollout: null,
      bootSets: [{ nodeGroups: ['g'], nodeList: null }],
    });

    expect(await h.ok(`mutation { deleteSessionTemplate(name: "cos") }`)).toEqual({ deleteSessionTemplate: true });
    expect(errorOf(await h.gql(`mutation { deleteSessionTemplate(name: "cos") }`)).code).toBe('NOT_FOUND');
  });

  test('example and validate', async () => {
    const ex = await h.ok(`{ sessionTemplateExample { name bootSets { name arch rootfsProvider } } }`);
    expect(ex.sessionTemplateExample.bootSets[0].rootfsProvider).toBe('sbps');
    await h.ok(PUT, {
      name: 'v',
      input: { bootSets: [{ ...compute, type: 'http', rootfsProvider: 'cpss3', nodeList: ['x3000c0s19b1n0', 'nid000002'] }] },
    });
    const v = await h.ok(`{ validateSessionTemplate(name: "v") { valid errors { field message } warnings { field message } } }`);
    expect(v.validateSessionTemplate.valid).toBe(false);
    expect(v.validateSessionTemplate.errors.map((e: { field: string }) => e.field)).toEqual(['bootSets.compute.type']);
    expect(v.validateSessionTemplate.warnings.map((e: { field: string }) => e.field).sort()).toEqual([
      'bootSets.compute.nodeList[1]',
      'bootSets.compute.rootfsProvider',
    ]);
    expect(errorOf(await h.gql(`{ validateSessionTemplate(name: "nope") { valid } }`)).code).toBe('NOT_FOUND');
  });
});

describe('PATCH deep merge', () => {
  test('merges cfs, boot sets per name, each boot set field by field; adds new boot sets; validates after', async () => {
    await h.ok(PUT, {
      name: 'p',
      input: {
        description: 'd',
        cfs: { configuration: 'base' },
        rollout: { canary: 1 },
        bootSets: [
          { ...compute, cfs: { configuration: 'c1' } },
          { name: 'uan', path: 'p2', type: 's3', arch: 'ARM', nodeGroups: ['uan'] },
        ],
      },
    });
    const r = await h.ok(PATCH, {
      name: 'p',
      patch: {
        cfs: {},
        rollout: { maxInFlight: '5' },
        bootSets: [
          { name: 'compute', kernelParameters: 'loud', cfs: { configuration: 'c2' } },
          { name: 'gpu', path: 'p3', type: 's3', nodeRolesGroups: ['Compute_GPU'] },
        ],
      },
    });
    const t = r.patchSessionTemplate.template;
    expect(t).toMatchObject({ description: 'd', cfs: { configuration: 'base' }, rollout: { canary: 1, maxInFlight: '5' } });
    expect(t.bootSets.map((b: { name: string }) => b.name)).toEqual(['compute', 'gpu', 'uan']);
    expect(t.bootSets[0]).toMatchObject({
      kernelParameters: 'loud',
      path: compute.path,
      nodeList: compute.nodeList,
      cfs: { configuration: 'c2' },
    });
    expect(t.bootSets[1]).toMatchObject({ arch: 'X86', nodeRolesGroups: ['Compute_GPU'] });
    expect(t.bootSets[2]).toMatchObject({ arch: 'ARM', nodeGroups: ['uan'] });

    const bad = await h.gql(PATCH, { name: 'p', patch: { bootSets: [{ name: 'compute', nodeList: ['x3000c0s19b1n0', 'junk'] }] } });
    expect(errorOf(bad)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'bootSets.compute.nodeList[1]' });
    const unchanged = await h.ok(`{ sessionTemplate(name: "p") { bootSets { nodeList } } }`);
    expect(unchanged.sessionTemplate.bootSets[0].nodeList).toEqual(['x3000c0s19b1n0']);
    expect(errorOf(await h.gql(PATCH, { name: 'nope', patch: { description: 'x' } })).code).toBe('NOT_FOUND');
  });
});

describe('validation errors name their field', () => {
  test.each<[string, string, Record<string, unknown>, string]>([
    ['template name', 'bad name!', { bootSets: [compute] }, 'name'],
    ['description length', 't', { description: 'd'.repeat(1024), bootSets: [compute] }, 'description'],
    ['no boot sets', 't', { bootSets: [] }, 'bootSets'],
    ['boot set name', 't', { bootSets: [{ ...compute, name: 'a b' }] }, 'bootSets[0].name'],
    ['no hardware', 't', { bootSets: [{ ...compute, nodeList: null }] }, 'bootSets.compute'],
    [
      'xname',
      't',
      { bootSets: [{ ...compute, nodeList: ['x3000c0s19b1n0', 'x3000c0s19b1n1', 'x3000c0s19b1n2', 'nonsense'] }] },
      'bootSets.compute.nodeList[3]',
    ],
    ['path', 't', { bootSets: [{ ...compute, path: '' }] }, 'bootSets.compute.path'],
    ['etag length', 't', { bootSets: [{ ...compute, etag: 'e'.repeat(65537) }] }, 'bootSets.compute.etag'],
    ['cfs length', 't', { bootSets: [{ ...compute, cfs: { configuration: 'c'.repeat(128) } }] }, 'bootSets.compute.cfs.configuration'],
    ['rollout', 't', { bootSets: [compute], rollout: { failureBudget: 'lots' } }, 'rollout.failureBudget'],
  ])('%s', async (_n, name, input, field) => {
    const r = await h.gql(PUT, { name, input });
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(r.errors![0]!.extensions!.issues!.length).toBeGreaterThan(0);
  });

  test('NIDs warn, or are rejected with reject_nids', async () => {
    const input = { bootSets: [{ ...compute, nodeList: ['nid000001'] }] };
    const warned = await h.ok(PUT, { name: 'nids', input });
    expect(warned.putSessionTemplate.warnings).toEqual([{ field: 'bootSets.compute.nodeList[0]', message: expect.stringMatching(/NID/) }]);
    await h.ok(`mutation { patchOptions(patch: { rejectNids: true }) { rejectNids } }`);
    expect(errorOf(await h.gql(PUT, { name: 'nids', input }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'bootSets.compute.nodeList[0]',
    });
    await h.ok(`mutation { patchOptions(patch: { rejectNids: false }) { rejectNids } }`);
  });
});

describe('tenancy', () => {
  const as = (tenant: string) => ({ 'Cray-Tenant-Name': tenant });
  test('templates are namespaced by tenant; no tenant lists every tenant', async () => {
    await h.ok(PUT, { name: 'shared', input: { bootSets: [compute] } });
    const mine = await h.ok(PUT, { name: 'shared', input: { description: 'tenant copy', bootSets: [compute] } }, as('vcluster-a'));
    expect(mine.putSessionTemplate.template.tenant).toBe('vcluster-a');
    const tenantView = await h.ok(
      `{ sessionTemplates { name tenant description } sessionTemplate(name: "shared") { description } }`,
      {},
      as('vcluster-a'),
    );
    expect(tenantView.sessionTemplates).toEqual([{ name: 'shared', tenant: 'vcluster-a', description: 'tenant copy' }]);
    expect(tenantView.sessionTemplate.description).toBe('tenant copy');
    const admin = await h.ok(`{ sessionTemplates { name tenant } sessionTemplate(name: "shared") { tenant } }`);
    expect(admin.sessionTemplates.filter((t: { name: string }) => t.name === 'shared')).toHaveLength(2);
    expect(admin.sessionTemplate.tenant).toBeNull();
  });

  test('an unknown tenant cannot create templates', async () => {
    const r = await h.gql(PUT, { name: 'x', input: { bootSets: [compute] } }, as('nobody'));
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'Cray-Tenant-Name' });
  });
});
