/** BOS's component write rules (auto fields, deep merge, 409) as table tests over the pure domain. */
import { describe, expect, test } from 'vitest';
import {
  applyComponentWrite,
  blankComponent,
  changedFields,
  checkComponentInput,
  needsStatusKick,
  refusesActualStateWrite,
  type ComponentFields,
  type ComponentPatch,
} from '../../src/domain/components.ts';

const now = new Date('2026-01-02T03:04:05Z');
const earlier = new Date('2025-12-31T00:00:00Z');
const known = { kernel: 'k1', kernelParameters: 'p1', initrd: 'i1' };
const ctx = { now, tenantKey: 't1', artifactsForToken: (t: string) => (t === 'tok-known' ? known : undefined) };
const base = (): ComponentFields => ({
  ...blankComponent('x1c0s0b0n0'),
  actualKernel: 'old-k',
  actualKernelParameters: 'old-p',
  actualInitrd: 'old-i',
  actualBssToken: 'old',
  actualUpdatedAt: earlier,
  desiredKernel: 'dk',
  desiredUpdatedAt: earlier,
  session: 's0',
  sessionTenant: 't0',
  powerOnAttempts: 2,
  powerOffForcefulAttempts: 1,
  statusOverride: 'failed',
  failureReason: 'power_on_timeout',
  lastActionAt: earlier,
});
const write = (p: ComponentPatch) => applyComponentWrite(base(), p, ctx);

describe('auto fields (reference §2, in order)', () => {
  test.each<[string, ComponentPatch, Partial<ComponentFields>]>([
    [
      '1. a known token replaces the actual artifacts and stamps the state',
      { actualState: { bssToken: 'tok-known' } },
      { actualKernel: 'k1', actualKernelParameters: 'p1', actualInitrd: 'i1', actualBssToken: 'tok-known', actualUpdatedAt: now },
    ],
    [
      '1. an unknown token keeps the artifacts and their timestamp',
      { actualState: { bssToken: 'tok-unknown' } },
      { actualKernel: 'old-k', actualBssToken: 'tok-unknown', actualUpdatedAt: earlier },
    ],
    [
      '1. a known token wins over artifacts in the body',
      { actualState: { bssToken: 'tok-known', bootArtifacts: { kernel: 'body-k' } } },
      { actualKernel: 'k1' },
    ],
    [
      '2. actual state without a token is stamped',
      { actualState: { bootArtifacts: { kernel: 'k2' } } },
      { actualKernel: 'k2', actualKernelParameters: 'old-p', actualUpdatedAt: now },
    ],
    [
      '2. desired state with only a token is not stamped (and keeps the session, counters)',
      { desiredState: { bssToken: 'b' } },
      { desiredBssToken: 'b', desiredUpdatedAt: earlier, session: '', powerOnAttempts: 2 },
    ],
    [
      '2. staged state and last action are always stamped',
      { stagedState: {}, lastAction: { action: 'powering_on' } },
      { stagedUpdatedAt: now, lastActionAt: now, lastAction: 'powering_on', lastActionFailed: false },
    ],
    [
      '3. enabled:true puts the component on hold (over a given override) and clears its failure reason',
      { enabled: true, status: { statusOverride: 'failed' } },
      { enabled: true, statusOverride: 'on_hold', failureReason: '' },
    ],
    [
      '3. enabled:false leaves the override',
      { enabled: false },
      { enabled: false, statusOverride: 'failed', failureReason: 'power_on_timeout' },
    ],
    [
      '4. desired state without a session clears the session',
      { desiredState: { configuration: 'c' } },
      { session: '', sessionTenant: '', desiredConfiguration: 'c' },
    ],
    [
      '4. desired state with a session keeps it, with the caller tenant',
      { desiredState: { configuration: 'c' }, session: 's1' },
      { session: 's1', sessionTenant: 't1' },
    ],
    [
      '5. desired artifacts reset the counters (over given ones)',
      { desiredState: { bootArtifacts: { kernel: 'k' } }, eventStats: { powerOnAttempts: 9 } },
      { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0, desiredKernel: 'k', desiredUpdatedAt: now },
    ],
    [
      '5. counters can be written when desired state is not',
      { eventStats: { powerOnAttempts: 9 } },
      { powerOnAttempts: 9, powerOffForcefulAttempts: 1 },
    ],
    [
      'merge: nested artifacts merge key by key',
      { desiredState: { bootArtifacts: { initrd: 'new-i' } } },
      { desiredKernel: 'dk', desiredInitrd: 'new-i' },
    ],
    ['merge: retryPolicy null clears it', { retryPolicy: null }, { retryPolicy: null }],
  ])('%s', (_name, patch, expected) => {
    expect(write(patch)).toMatchObject(expected);
  });

  test('a put starts from a blank record', () => {
    const n = applyComponentWrite(blankComponent('x1c0s0b0n0'), { enabled: true }, ctx);
    expect(n).toMatchObject({ enabled: true, statusOverride: 'on_hold', session: '', desiredKernel: '', actualUpdatedAt: null });
  });
});

describe('409: actual state writes while mid-transition', () => {
  test.each<[boolean, string, string, boolean]>([
    [true, 'power_off_pending', 'session_setup', true],
    [true, 'power_off_gracefully_called', 'powering_off_gracefully', true],
    [true, 'on_hold', '', true],
    [true, 'power_on_called', 'powering_on', false],
    [true, 'configuring', 'powering_on', false],
    [true, 'stable', 'session_setup', false],
    [false, 'power_off_pending', 'session_setup', false],
  ])('enabled=%s status=%s last_action=%s -> refused=%s', (enabled, status, lastAction, refused) => {
    expect(refusesActualStateWrite({ enabled, status, lastAction })).toBe(refused);
  });
});

describe('status kicks and change detection', () => {
  test.each<[string, ComponentPatch, boolean]>([
    ['enabling', { enabled: true }, true],
    ['a new desired kernel', { desiredState: { bootArtifacts: { kernel: 'new' } } }, true],
    ['a report with a known token', { actualState: { bssToken: 'tok-known' } }, true],
    ['an error text', { error: 'x' }, false],
    ['the same desired kernel', { desiredState: { bootArtifacts: { kernel: 'dk' } } }, false],
  ])('%s -> kick=%s', (_n, patch, kick) => {
    expect(needsStatusKick(patch, changedFields(base(), write(patch)))).toBe(kick);
  });
});

describe('checkComponentInput (the GraphQL edge)', () => {
  test('nulls mean "not given"; retryPolicy null is kept', () => {
    const r = checkComponentInput({ enabled: null, error: 'e', retryPolicy: null, desiredState: { configuration: null, bssToken: 't' } });
    expect(r).toEqual({ ok: true, value: { error: 'e', retryPolicy: null, desiredState: { bssToken: 't' } }, warnings: [] });
  });
  test.each<[Record<string, unknown>, string]>([
    [{ lastAction: { action: 'dancing' } }, 'patch.lastAction.action'],
    [{ eventStats: { powerOnAttempts: -1 } }, 'patch.eventStats.powerOnAttempts'],
    [{ retryPolicy: 1_048_577 }, 'patch.retryPolicy'],
    [{ desiredState: { configuration: 'c'.repeat(128) } }, 'patch.desiredState.configuration'],
    [{ session: 'bad name' }, 'patch.session'],
    [{ stagedState: { bootArtifacts: { kernel: 'k'.repeat(4096) } } }, 'patch.stagedState.bootArtifacts.kernel'],
  ])('%j -> %s', (input, field) => {
    const r = checkComponentInput(input, 'patch');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.field).toBe(field);
  });
});
