import { describe, expect, it } from 'vitest';
import { decide, type DecisionInput } from '../../src/domain/status-decision.ts';
import type { ConfigComponent, PowerState } from '../../src/adapters/ports.ts';

const now = new Date('2026-01-01T00:10:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const o = { maxPowerOnWaitTime: 120, maxBootWaitTime: 1200 };
const art = { kernel: 's3://i/kernel', params: 'console=ttyS0', initrd: 's3://i/initrd' };

function comp(p: Partial<DecisionInput> = {}): DecisionInput {
  return {
    phase: '',
    status: 'stable',
    lastAction: 'session_setup',
    lastActionFailed: false,
    lastActionAt: ago(1),
    desiredKernel: art.kernel,
    desiredKernelParameters: art.params,
    desiredInitrd: art.initrd,
    desiredConfiguration: 'cfg',
    actualKernel: '',
    actualKernelParameters: '',
    actualInitrd: '',
    error: '',
    failureReason: '',
    ...p,
  };
}
const booted = { actualKernel: art.kernel, actualKernelParameters: art.params, actualInitrd: art.initrd };
const on: PowerState = { state: 'on', error: '' };
const off: PowerState = { state: 'off', error: '' };
const cfs = (p: Partial<ConfigComponent> = {}): ConfigComponent => ({
  id: 'x',
  desiredConfig: 'cfg',
  configurationStatus: 'configured',
  enabled: true,
  errorCount: 0,
  tags: {},
  ...p,
});

describe('status decision table (BOS §4.1)', () => {
  const rows: Array<[string, DecisionInput, PowerState | undefined, ConfigComponent | undefined, Partial<ReturnType<typeof decide>>]> = [
    [
      'no PCS record',
      comp(),
      undefined,
      cfs(),
      { rule: '0-pcs', phase: '', override: 'failed', disable: true, reason: 'not_in_inventory' },
    ],
    ['no CFS record', comp(), on, undefined, { rule: '0-cfs', phase: '', override: 'failed', disable: true }],
    [
      'off and shutdown wanted',
      comp({ desiredKernel: '', desiredKernelParameters: '', desiredInitrd: '' }),
      off,
      cfs(),
      { rule: '1', phase: '', disable: true },
    ],
    [
      'off and shutdown wanted, a power-on still in flight',
      comp({ desiredKernel: '', desiredKernelParameters: '', desiredInitrd: '', lastAction: 'powering_on', lastActionAt: ago(5) }),
      off,
      cfs(),
      { rule: '1p', phase: 'powering_on', disable: false },
    ],
    [
      'off and shutdown wanted, the power-on timed out',
      comp({ desiredKernel: '', desiredKernelParameters: '', desiredInitrd: '', lastAction: 'powering_on', lastActionAt: ago(121) }),
      off,
      cfs(),
      { rule: '1', phase: '', disable: true },
    ],
    ['off, boot wanted', comp(), off, cfs(), { rule: '2', phase: 'powering_on', disable: false }],
    [
      'off too long after power-on',
      comp({ lastAction: 'powering_on', lastActionAt: ago(121) }),
      off,
      cfs(),
      { rule: '2', lastActionFailed: true, reason: 'power_on_timeout' },
    ],
    ['off, power-on recent', comp({ lastAction: 'powering_on', lastActionAt: ago(119) }), off, cfs(), { rule: '2' }],
    ['on, shutdown wanted', comp({ desiredKernel: '' }), on, cfs(), { rule: '3', phase: 'powering_off' }],
    ['match, CFS has other config', comp(booted), on, cfs({ desiredConfig: 'old' }), { rule: '4a', phase: 'configuring' }],
    [
      'match, no config wanted',
      comp({ ...booted, desiredConfiguration: '' }),
      on,
      cfs({ desiredConfig: '' }),
      { rule: '4b', phase: '', disable: true, reason: '' },
    ],
    ['match, configured', comp(booted), on, cfs(), { rule: '4c', phase: '', disable: true }],
    [
      'match, cfs failed',
      comp(booted),
      on,
      cfs({ configurationStatus: 'failed' }),
      { rule: '4d', override: 'failed', disable: true, reason: 'configuration_failed', error: 'cfs configuration failed' },
    ],
    ['match, cfs pending', comp(booted), on, cfs({ configurationStatus: 'pending' }), { rule: '4e', phase: 'configuring', disable: false }],
    [
      'match, cfs unconfigured',
      comp(booted),
      on,
      cfs({ configurationStatus: 'unconfigured' }),
      { rule: '4f', override: 'failed', reason: 'configuration_unknown' },
    ],
    ['on, waiting for report', comp({ lastAction: 'powering_on', lastActionAt: ago(30) }), on, cfs(), { rule: '5', phase: 'powering_on' }],
    [
      'on, never reported',
      comp({ lastAction: 'powering_on', lastActionAt: ago(1201) }),
      on,
      cfs(),
      { rule: '6', phase: 'powering_off', reason: 'boot_never_reported' },
    ],
    [
      'on, wrong artifacts after boot',
      comp({ lastAction: 'powering_on', lastActionAt: ago(1201), actualKernel: 'other' }),
      on,
      cfs(),
      { rule: '6', reason: 'booted_wrong_artifacts' },
    ],
    ['on with other image (reboot)', comp(), on, cfs(), { rule: '6', phase: 'powering_off' }],
    ['PCS undefined counts as not off', comp(), { state: 'undefined', error: '' }, cfs(), { rule: '6' }],
    ['already failed stays failed', comp({ status: 'failed' }), off, cfs(), { rule: '2', override: 'failed', disable: true }],
  ];
  it.each(rows)('%s', (_name, c, p, f, expected) => {
    expect(decide(c, p, f, o, now)).toMatchObject(expected);
  });

  it('clears actual state when leaving powering_off, and resets counters on done', () => {
    const d = decide(comp({ phase: 'powering_off' }), off, cfs(), o, now);
    expect(d).toMatchObject({ phase: 'powering_on', clearActual: true, resetCounters: false });
    const done = decide(comp({ ...booted, phase: 'configuring' }), on, cfs(), o, now);
    expect(done).toMatchObject({ phase: '', clearActual: false, resetCounters: true });
  });
});

describe('no spurious side effects', () => {
  it('a recent power-on is not a timeout, and a plain reboot carries no failure reason', () => {
    expect(decide(comp({ lastAction: 'powering_on', lastActionAt: ago(119) }), off, cfs(), o, now).lastActionFailed).toBeUndefined();
    expect(decide(comp(), on, cfs(), o, now).reason).toBeUndefined();
  });
});
