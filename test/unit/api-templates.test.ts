/** Template validation (BOS PUT) and PATCH deep merge, as table tests over the pure domain. */
import { describe, expect, test } from 'vitest';
import {
  checkBootSets,
  mergeTemplatePatch,
  recordToDraft,
  validateTemplate,
  type BootSetDraft,
  type TemplateDraft,
  type TemplateRecord,
} from '../../src/domain/templates.ts';

const rules = { rejectNids: false };
const bs = (over: Partial<BootSetDraft> = {}): BootSetDraft => ({
  name: 'compute',
  path: 's3://boot-images/abc/manifest.json',
  type: 's3',
  nodeList: ['x3000c0s19b1n0'],
  ...over,
});
const draft = (over: Partial<TemplateDraft> = {}): TemplateDraft => ({ bootSets: [bs()], ...over });

describe('validateTemplate', () => {
  test('fills BOS defaults: arch X86, enableCfs true; drops an empty cfs; canonicalises node lists', () => {
    const r = validateTemplate(
      draft({ cfs: { configuration: '' }, bootSets: [bs({ nodeList: ['X3000C0S019B1N00'], cfs: { configuration: '' } })] }),
      rules,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.enableCfs).toBe(true);
    expect(r.value.cfs).toBeNull();
    expect(r.value.bootSets.compute).toEqual({
      path: 's3://boot-images/abc/manifest.json',
      type: 's3',
      arch: 'X86',
      node_list: ['x3000c0s19b1n0'],
    });
  });

  test.each<[string, Partial<TemplateDraft>, string, RegExp]>([
    ['no boot sets', { bootSets: [] }, 'bootSets', /at least 1 boot set/],
    ['empty description', { description: '' }, 'description', /must not be empty/],
    ['long description', { description: 'd'.repeat(1024) }, 'description', /at most 1023/],
    ['long cfs configuration', { cfs: { configuration: 'c'.repeat(128) } }, 'cfs.configuration', /at most 127/],
    ['bad boot set name', { bootSets: [bs({ name: '-bad' })] }, 'bootSets[0].name', /start and end with a letter/],
    ['duplicate boot set', { bootSets: [bs(), bs()] }, 'bootSets[1].name', /given twice/],
    ['no hardware', { bootSets: [bs({ nodeList: null })] }, 'bootSets.compute', /at least one of nodeList/],
    ['empty node list', { bootSets: [bs({ nodeList: [], nodeGroups: ['g'] })] }, 'bootSets.compute.nodeList', /at least 1 entry/],
    [
      'bad xname',
      { bootSets: [bs({ nodeList: ['x3000c0s19b1n0', 'x1', 'x3000c0s1b0n0', 'not-a-node'] })] },
      'bootSets.compute.nodeList[3]',
      /not a valid xname/,
    ],
    ['empty path', { bootSets: [bs({ path: '' })] }, 'bootSets.compute.path', /must not be empty/],
    ['missing type', { bootSets: [bs({ type: null })] }, 'bootSets.compute.type', /is required/],
    [
      'long kernel parameters',
      { bootSets: [bs({ kernelParameters: 'k'.repeat(4097) })] },
      'bootSets.compute.kernelParameters',
      /at most 4096/,
    ],
    ['empty rootfs provider', { bootSets: [bs({ rootfsProvider: '' })] }, 'bootSets.compute.rootfsProvider', /must not be empty/],
    ['empty group name', { bootSets: [bs({ nodeGroups: [''] })] }, 'bootSets.compute.nodeGroups[0]', /must not be empty/],
    ['bad rollout percent', { rollout: { maxInFlight: '150%' } }, 'rollout.maxInFlight', /percentage/],
    ['bad rollout wave', { rollout: { powerOnWaveSize: 0 } }, 'rollout.powerOnWaveSize', /at least 1/],
  ])('%s -> error at %s', (_name, over, field, message) => {
    const r = validateTemplate(draft(over), rules);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const issue = r.errors.find((e) => e.field === field);
    expect(issue, JSON.stringify(r.errors)).toBeDefined();
    expect(issue!.message).toMatch(message);
  });

  test('NID-like node names warn, or fail with reject_nids', () => {
    const d = draft({ bootSets: [bs({ nodeList: ['x3000c0s19b1n0', 'nid000001'] })] });
    const warn = validateTemplate(d, { rejectNids: false });
    expect(warn.ok).toBe(true);
    expect(warn.warnings).toEqual([{ field: 'bootSets.compute.nodeList[1]', message: expect.stringMatching(/looks like a NID/) }]);
    const reject = validateTemplate(d, { rejectNids: true });
    expect(reject.ok).toBe(false);
    if (!reject.ok) expect(reject.errors[0]!.field).toBe('bootSets.compute.nodeList[1]');
  });

  test('rollout is kept only with fields set', () => {
    const r = validateTemplate(draft({ rollout: { maxInFlight: '10%', canary: 2, failureBudget: null } }), rules);
    expect(r.ok && r.value.rollout).toEqual({ maxInFlight: '10%', canary: 2 });
    const none = validateTemplate(draft({ rollout: { maxInFlight: null } }), rules);
    expect(none.ok && none.value.rollout).toBeNull();
  });
});

describe('mergeTemplatePatch (BOS deep merge)', () => {
  const stored: TemplateRecord = {
    name: 't',
    tenant: null,
    description: 'd',
    enableCfs: true,
    cfs: { configuration: 'base' },
    rollout: { canary: 1 },
    bootSets: {
      compute: { path: 'p1', type: 's3', arch: 'X86', node_list: ['x1c0s0b0n0'], kernel_parameters: 'quiet', cfs: { configuration: 'c1' } },
      uan: { path: 'p2', type: 's3', arch: 'ARM', node_groups: ['uan'] },
    },
  };
  const merged = (patch: Parameters<typeof mergeTemplatePatch>[1]) => {
    const r = validateTemplate(mergeTemplatePatch(recordToDraft(stored), patch), rules);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    return r.value;
  };

  test('boot set fields merge by name; untouched fields and boot sets stay', () => {
    const v = merged({ bootSets: [{ name: 'compute', kernelParameters: 'loud' }] });
    expect(v.bootSets.compute).toEqual({ ...stored.bootSets.compute, kernel_parameters: 'loud' });
    expect(v.bootSets.uan).toEqual(stored.bootSets.uan);
    expect(v.description).toBe('d');
    expect(v.cfs).toEqual({ configuration: 'base' });
  });

  test('a boot set cfs merges as a dict; null clears an optional field', () => {
    const v = merged({ bootSets: [{ name: 'compute', cfs: { configuration: 'c2' }, nodeGroups: ['g'], nodeList: null }] });
    expect(v.bootSets.compute!.cfs).toEqual({ configuration: 'c2' });
    expect(v.bootSets.compute!.node_list).toBeUndefined();
    expect(v.bootSets.compute!.node_groups).toEqual(['g']);
  });

  test('a new boot set name is added and must be complete', () => {
    const v = merged({ bootSets: [{ name: 'gpu', path: 'p3', type: 's3', nodeRolesGroups: ['Compute'] }] });
    expect(Object.keys(v.bootSets)).toEqual(['compute', 'uan', 'gpu']);
    expect(v.bootSets.gpu!.arch).toBe('X86');
    const bad = validateTemplate(mergeTemplatePatch(recordToDraft(stored), { bootSets: [{ name: 'gpu', nodeGroups: ['g'] }] }), rules);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.map((e) => e.field)).toEqual(['bootSets.gpu.path', 'bootSets.gpu.type']);
  });

  test('template cfs and rollout merge as dicts; description and enableCfs replace', () => {
    const v = merged({ cfs: {}, rollout: { maxInFlight: '5', canary: null }, description: 'new', enableCfs: false });
    expect(v.cfs).toEqual({ configuration: 'base' });
    expect(v.rollout).toEqual({ maxInFlight: '5' });
    expect(v.description).toBe('new');
    expect(v.enableCfs).toBe(false);
    expect(merged({ cfs: { configuration: '' } }).cfs).toBeNull();
  });
});

describe('checkBootSets (session-time static checks)', () => {
  const t = (b: Record<string, unknown>) =>
    ({ bootSets: { compute: { path: 'p', type: 's3', arch: 'X86', node_list: ['x1c0s0b0n0'], ...b } } }) as Pick<
      TemplateRecord,
      'bootSets'
    >;
  test.each<[string, Record<string, unknown>, 'boot' | 'shutdown', string[], string[]]>([
    ['fine', {}, 'boot', [], []],
    ['unsupported rootfs provider warns', { rootfs_provider: 'cpss3' }, 'boot', [], ['bootSets.compute.rootfsProvider']],
    ['non-s3 type fails a boot', { type: 'http' }, 'boot', ['bootSets.compute.type'], []],
    ['non-s3 type is fine for a shutdown', { type: 'http' }, 'shutdown', [], []],
    ['no hardware fails', { node_list: [] }, 'boot', ['bootSets.compute'], []],
    ['NID warns', { node_list: ['nid000001'] }, 'boot', [], ['bootSets.compute.nodeList[0]']],
  ])('%s', (_n, b, op, errors, warnings) => {
    const r = checkBootSets(t(b), op, rules);
    expect(r.errors.map((e) => e.field)).toEqual(errors);
    expect(r.warnings.map((e) => e.field)).toEqual(warnings);
  });
  test('no boot sets at all', () => {
    expect(checkBootSets({ bootSets: {} }, 'boot', rules).errors).toEqual([
      { field: 'bootSets', message: 'the template has no boot sets' },
    ]);
  });
});
