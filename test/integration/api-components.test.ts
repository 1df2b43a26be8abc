/**
 * Components over real HTTP: CRUD, BOS's auto fields and computed status (the generated column) as
 * tables, the 409 rule, bulk patch filters, events and status kicks, applyStaged, tenancy.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { COMPONENT_FIELDS, errorOf, startHarness, type Harness } from './api-harness.ts';

let h: Harness;
const A = 'x1000c0s0b0n0';
const B = 'x1000c0s0b0n1';
const C = 'x1000c0s0b1n0';
const PUT = `mutation($id: ID!, $input: ComponentInput!) { putComponent(id: $id, input: $input) { ${COMPONENT_FIELDS} } }`;
const PATCH = `mutation($id: ID!, $patch: ComponentInput!) { patchComponent(id: $id, patch: $patch) { ${COMPONENT_FIELDS} } }`;
const PATCH_MANY = `mutation($f: ComponentsPatchFilter!, $p: ComponentInput!, $skip: Boolean) { patchComponents(filter: $f, patch: $p, skipBadIds: $skip) { id error } }`;
const GET = `query($id: ID!) { component(id: $id) { ${COMPONENT_FIELDS} } }`;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(
    sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok-1', 's3://k', 'console=ttyS0', 's3://i')`,
  );
  await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) values ('vcluster-a', ${A})`);
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.scheduler.clear());

const events = async (id: string) =>
  (
    await h.db.db.execute(sql`select kind, actor, from_phase, to_phase, from_status, to_status, action, reason, data
  from component_events where component_id = ${id} order by id`)
  ).rows as Record<string, any>[];

describe('CRUD', () => {
  test('put canonicalises the id; get; delete; each write is an event', async () => {
    const r = await h.ok(PUT, {
      id: 'X1000C0S00B0N0',
      input: { desiredState: { bootArtifacts: { kernel: 'k' }, configuration: 'cfg' }, retryPolicy: 5 },
    });
    expect(r.putComponent).toMatchObject({
      id: A,
      enabled: false,
      session: '',
      retryPolicy: 5,
      status: { phase: 'NONE', status: 'STABLE', statusOverride: 'NONE' },
      desiredState: { bootArtifacts: { kernel: 'k', initrd: '' }, configuration: 'cfg', lastUpdated: expect.any(String) },
      actualState: { lastUpdated: null },
    });
    expect((await h.ok(GET, { id: A })).component.id).toBe(A);
    expect((await h.ok(GET, { id: 'x9c0s0b0n0' })).component).toBeNull();
    expect(errorOf(await h.gql(GET, { id: 'not-an-xname' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });

    expect(await h.ok(`mutation { deleteComponent(id: "${A}") }`)).toEqual({ deleteComponent: true });
    expect(errorOf(await h.gql(`mutation { deleteComponent(id: "${A}") }`)).code).toBe('NOT_FOUND');
    expect((await events(A)).map((e) => [e.kind, e.actor, e.reason, e.data?.write ?? null])).toEqual([
      ['manual', 'tester', null, 'create'],
      ['manual', 'tester', 'deleted', null],
    ]);
  });

  test('putComponents writes many in one transaction; a bad entry names its index and writes none', async () => {
    const bad = await h.gql(`mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }`, {
      c: [{ id: A }, { id: 'bogus' }, { id: C, eventStats: { powerOnAttempts: -1 } }],
    });
    expect(errorOf(bad)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'components[1].id' });
    expect(bad.errors![0]!.extensions!.issues!.map((i) => i.field)).toEqual([
      'components[1].id',
      'components[2].eventStats.powerOnAttempts',
    ]);
    expect((await h.ok(GET, { id: A })).component).toBeNull();
    const ok = await h.ok(`mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id enabled } }`, {
      c: [{ id: A }, { id: B, enabled: true }, { id: C }],
    });
    expect(ok.putComponents).toEqual([
      { id: A, enabled: false },
      { id: B, enabled: true },
      { id: C, enabled: false },
    ]);
    expect(h.scheduler.committed).toEqual([['status']]);
  });
});

describe('computed status (generated column, reference §1.4)', () => {
  test.each<[string, string, string, boolean, string]>([
    ['NONE', 'NONE', '', false, 'STABLE'],
    ['POWERING_ON', 'NONE', 'powering_on', false, 'POWER_ON_CALLED'],
    ['POWERING_ON', 'NONE', 'powering_on', true, 'POWER_ON_PENDING'],
    ['POWERING_ON', 'NONE', 'session_setup', false, 'POWER_ON_PENDING'],
    ['POWERING_OFF', 'NONE', 'powering_off_gracefully', false, 'POWER_OFF_GRACEFULLY_CALLED'],
    ['POWERING_OFF', 'NONE', 'powering_off_forcefully', false, 'POWER_OFF_FORCEFULLY_CALLED'],
    ['POWERING_OFF', 'NONE', 'powering_on', false, 'POWER_OFF_PENDING'],
    ['CONFIGURING', 'NONE', 'powering_on', false, 'CONFIGURING'],
    ['CONFIGURING', 'FAILED', 'powering_on', false, 'FAILED'],
    ['POWERING_ON', 'ON_HOLD', 'powering_on', false, 'ON_HOLD'],
    ['NONE', 'QUEUED', '', false, 'QUEUED'],
  ])('phase %s, override %s, last action "%s" (failed %s) -> %s', async (phase, statusOverride, action, failed, expected) => {
    const input = { status: { phase, statusOverride }, ...(action ? { lastAction: { action, failed } } : {}) };
    const r = await h.ok(PUT, { id: C, input });
    expect(r.putComponent.status.status).toBe(expected);
    const listed = await h.ok(`query($s: [ComponentStatus!]) { components(filter: { status: $s, ids: ["${C}"] }) { nodes { id } } }`, {
      s: [expected],
    });
    expect(listed.components.nodes).toEqual([{ id: C }]);
  });
});

describe('auto fields through the API (reference §2)', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]>([
    [
      'a known token maps to its artifacts',
      {},
      { actualState: { bssToken: 'tok-1' } },
      {
        actualState: {
          bootArtifacts: { kernel: 's3://k', kernelParameters: 'console=ttyS0', initrd: 's3://i' },
          bssToken: 'tok-1',
          lastUpdated: expect.any(String),
        },
      },
    ],
    [
      'an unknown token keeps artifacts and timestamp',
      { actualState: { bootArtifacts: { kernel: 'old' } } },
      { actualState: { bssToken: 'nope' } },
      { actualState: { bootArtifacts: { kernel: 'old' }, bssToken: 'nope' } },
    ],
    [
      'enabling puts the component on hold',
      { status: { statusOverride: 'FAILED' } },
      { enabled: true },
      { enabled: true, status: { status: 'ON_HOLD', statusOverride: 'ON_HOLD' } },
    ],
    [
      'desired state without a session clears it',
      { session: 'sess' },
      { desiredState: { configuration: 'c' } },
      { session: '', desiredState: { configuration: 'c' } },
    ],
    [
      'desired artifacts reset the attempt counters',
      { eventStats: { powerOnAttempts: 2, powerOffForcefulAttempts: 1 } },
      { desiredState: { bootArtifacts: { kernel: 'k' } }, session: 's' },
      { session: 's', eventStats: { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 } },
    ],
    [
      'last action is stamped',
      {},
      { lastAction: { action: 'powering_on' } },
      { lastAction: { action: 'powering_on', failed: false, lastUpdated: expect.any(String) } },
    ],
  ])('%s', async (_n, setup, patch, expected) => {
    const first = await h.ok(PUT, { id: B, input: setup });
    const r = await h.ok(PATCH, { id: B, patch });
    expect(r.patchComponent).toMatchObject(expected);
    if (_n.startsWith('an unknown token'))
      expect(r.patchComponent.actualState.lastUpdated).toBe(first.putComponent.actualState.lastUpdated);
  });

  test('enabling or changing desired state kicks status; an error text does not', async () => {
    await h.ok(PUT, { id: B, input: {} });
    h.scheduler.clear();
    await h.ok(PATCH, { id: B, patch: { error: 'something' } });
    expect(h.scheduler.committed).toEqual([]);
    await h.ok(PATCH, { id: B, patch: { desiredState: { bootArtifacts: { kernel: 'new' } } } });
    await h.ok(PATCH, { id: B, patch: { enabled: true } });
    expect(h.scheduler.committed).toEqual([['status'], ['status']]);
    const last = (await events(B)).at(-1)!;
    expect(last).toMatchObject({
      kind: 'manual',
      actor: 'tester',
      from_status: 'stable',
      to_status: 'on_hold',
      data: { write: 'patch', changed: expect.arrayContaining(['enabled', 'statusOverride']) },
    });
  });
});

describe('409: actual state while mid-transition', () => {
  const midTransition = { enabled: false, status: { phase: 'POWERING_OFF' }, lastAction: { action: 'powering_off_gracefully' } };
  test('refused for an enabled, non-stable component whose last action is not powering_on', async () => {
    await h.ok(PUT, { id: B, input: midTransition });
    await h.db.db.execute(sql`update components set enabled = true where id = ${B}`);
    const r = await h.gql(PATCH, { id: B, patch: { actualState: { bssToken: 'tok-1' } } });
    expect(errorOf(r)).toMatchObject({ code: 'CONFLICT', field: 'patch.actualState' });
    expect((await h.ok(PATCH, { id: B, patch: { error: 'other fields are fine' } })).patchComponent.error).toBe('other fields are fine');
    await h.ok(PATCH, { id: B, patch: { lastAction: { action: 'powering_on' }, status: { phase: 'POWERING_ON' } } });
    expect((await h.ok(PATCH, { id: B, patch: { actualState: { bssToken: 'tok-1' } } })).patchComponent.actualState.bssToken).toBe('tok-1');
  });
  test('put is not checked (as BOS)', async () => {
    await h.db.db.execute(sql`update components set enabled = true, phase = 'powering_off', last_action = 'session_setup' where id = ${B}`);
    expect((await h.ok(PUT, { id: B, input: { actualState: { bssToken: 'tok-1' } } })).putComponent.actualState.bssToken).toBe('tok-1');
  });
});

describe('patchComponents', () => {
  test('exactly one filter', async () => {
    expect(errorOf(await h.gql(PATCH_MANY, { f: {}, p: { error: 'x' } }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'filter' });
    expect(errorOf(await h.gql(PATCH_MANY, { f: { ids: [A], session: 's' }, p: { error: 'x' } }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'filter',
    });
  });
  test('by ids: unknown ids are NOT_FOUND (nothing written) unless skipBadIds', async () => {
    await h.ok(`mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }`, { c: [{ id: A }, { id: B }] });
    expect(errorOf(await h.gql(PATCH_MANY, { f: { ids: [A, 'x9c0s0b0n0'] }, p: { error: 'e1' } })).code).toBe('NOT_FOUND');
    expect((await h.ok(GET, { id: A })).component.error).toBe('');
    const r = await h.ok(PATCH_MANY, { f: { ids: [A, 'x9c0s0b0n0', B] }, p: { error: 'e1' }, skip: true });
    expect(r.patchComponents).toEqual([
      { id: A, error: 'e1' },
      { id: B, error: 'e1' },
    ]);
  });
  test("by session: only that session's components", async () => {
    await h.ok(PATCH, { id: A, patch: { session: 'sx' } });
    const r = await h.ok(PATCH_MANY, { f: { session: 'sx' }, p: { error: 'e2' } });
    expect(r.patchComponents).toEqual([{ id: A, error: 'e2' }]);
    expect((await h.ok(GET, { id: B })).component.error).toBe('e1');
  });
});

describe('applyStaged (reference §4.11)', () => {
  const staged = (
    session: string,
    a: Partial<Record<'kernel' | 'kernelParameters' | 'initrd', string>> = { kernel: 'k', kernelParameters: 'p', initrd: 'i' },
  ) => ({
    stagedState: { bootArtifacts: a, configuration: 'cfg-new', session },
    actualState: { bootArtifacts: { kernel: 'old' } },
    eventStats: { powerOnAttempts: 2 },
  });
  const APPLY = `mutation($x: [ID!]!) { applyStaged(xnames: $x) { succeeded failed ignored failures { id error } } }`;
  const ids = ['x2000c0s0b0n0', 'x2000c0s0b0n1', 'x2000c0s0b1n0', 'x2000c0s0b1n1', 'x2000c0s1b0n0', 'x2000c0s1b0n1'];

  beforeAll(async () => {
    for (const [name, op] of [
      ['stg-boot', 'boot'],
      ['stg-reboot', 'reboot'],
      ['stg-off', 'shutdown'],
    ]) {
      await h.db.db.execute(
        sql`insert into sessions (name, operation, template_name, stage, status) values (${name}, ${op}, 'cos', true, 'running')`,
      );
    }
  });

  test("succeeded, failed and ignored, with BOS's effects on each", async () => {
    await h.ok(`mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }`, {
      c: [
        { id: ids[0], ...staged('stg-boot') },
        { id: ids[1], ...staged('stg-reboot') },
        { id: ids[2], ...staged('stg-off') },
        { id: ids[3], ...staged('stg-boot', { kernel: 'k', kernelParameters: 'p' }) },
        { id: ids[4], ...staged('stg-gone') },
        { id: ids[5] },
      ],
    });
    h.scheduler.clear();
    const r = await h.ok(APPLY, { x: [...ids, 'x9c0s0b0n0'] });
    expect(r.applyStaged).toEqual({
      succeeded: [ids[0], ids[1]],
      failed: [ids[2], ids[3], ids[4]],
      ignored: [ids[5], 'x9c0s0b0n0'],
      failures: [
        { id: ids[2], error: 'Staged operation is shutdown but boot artifacts have been specified' },
        { id: ids[3], error: 'Staged operation is boot but some boot artifacts have not been specified' },
        { id: ids[4], error: 'Staged session no longer exists' },
      ],
    });
    expect(h.scheduler.committed).toEqual([['status']]);
    const boot = (await h.ok(GET, { id: ids[0] })).component;
    expect(boot).toMatchObject({
      enabled: true,
      session: 'stg-boot',
      error: '',
      status: { status: 'ON_HOLD' },
      lastAction: { action: 'apply_staged' },
      desiredState: { bootArtifacts: { kernel: 'k', kernelParameters: 'p', initrd: 'i' }, configuration: 'cfg-new' },
      actualState: { bootArtifacts: { kernel: 'old' } },
      stagedState: { session: 'stg-boot' },
      eventStats: { powerOnAttempts: 0 },
    });
    expect((await h.ok(GET, { id: ids[1] })).component.actualState.bootArtifacts.kernel).toBe('');
    const off = (await h.ok(GET, { id: ids[2] })).component;
    expect(off).toMatchObject({
      enabled: false,
      session: 'stg-off',
      error: expect.stringMatching(/shutdown/),
      lastAction: { action: 'apply_staged' },
      desiredState: { bootArtifacts: { kernel: '' } },
    });
    expect((await events(ids[0])).at(-1)).toMatchObject({ kind: 'stage', action: 'apply_staged', to_status: 'on_hold' });
  });

  test('clear_stage empties the staged state; xnames are validated', async () => {
    await h.ok(`mutation { patchOptions(patch: { clearStage: true }) { clearStage } }`);
    await h.ok(PUT, { id: ids[0], input: staged('stg-boot') });
    await h.ok(APPLY, { x: [ids[0]] });
    expect((await h.ok(GET, { id: ids[0] })).component.stagedState).toMatchObject({
      session: '',
      configuration: '',
      bootArtifacts: { kernel: '' },
    });
    await h.ok(`mutation { patchOptions(patch: { clearStage: false }) { clearStage } }`);
    expect(errorOf(await h.gql(APPLY, { x: [ids[0], 'rack7'] }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'xnames[1]' });
  });
});

describe('tenancy', () => {
  const as = { 'Cray-Tenant-Name': 'vcluster-a' };
  test('a tenant sees and patches only its xnames; an unknown tenant is refused', async () => {
    const list = await h.ok(`{ components { nodes { id } } }`, {}, as);
    expect(list.components.nodes).toEqual([{ id: A }]);
    expect((await h.ok(GET, { id: B }, as)).component).toBeNull();
    expect(errorOf(await h.gql(PATCH, { id: B, patch: { error: 'x' } }, as)).code).toBe('NOT_FOUND');
    expect(errorOf(await h.gql(PATCH_MANY, { f: { ids: [A, B] }, p: { error: 'x' } }, as)).code).toBe('NOT_FOUND');
    expect((await h.ok(PATCH, { id: A, patch: { session: 'tenant-session' } }, as)).patchComponent.sessionTenant).toBe('vcluster-a');
    expect(errorOf(await h.gql(`{ components { nodes { id } } }`, {}, { 'Cray-Tenant-Name': 'ghost' }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'Cray-Tenant-Name',
    });
    const applied = await h.ok(`mutation { applyStaged(xnames: ["${B}"]) { ignored } }`, {}, as);
    expect(applied.applyStaged.ignored).toEqual([B]);
  });
});
