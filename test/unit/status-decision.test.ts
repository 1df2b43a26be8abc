import { describe, expect, it } from 'vitest';
import { decide, type DecisionInput } from '../../src/domain/status-decision.ts';
import type { ConfigComponent, PowerState } from '../../src/adapters/ports.ts';

const now = new Date('2026-01-01T00:10:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const o = { maxPowerOnWaitTime: 120, maxBootWaitTime: 1200, powerUnknownTimeout: 60 };
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
    powerUnknownSince: null,
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

describe('unknown power (rows U1, U2): never on, never off', () => {
  const dead: PowerState = {
    state: 'unknown',
    cause: 'bmc_unreachable',
    error: 'BMC ipmitool chassis power status failed: unreachable: x',
  };
  const login: PowerState = { state: 'unknown', cause: 'bmc_auth_failed', error: 'refused_login: x: RAKP 2 HMAC is invalid' };
  /** A node U1 held `s` seconds ago for this cause. */
  const held = (s: number, p: Partial<DecisionInput> = {}) =>
    comp({ status: 'on_hold', failureReason: 'bmc_unreachable', error: 'Power unknown', powerUnknownSince: ago(s), ...p });
  const rows: Array<[string, DecisionInput, PowerState, Partial<ReturnType<typeof decide>>]> = [
    [
      'first unknown read: held at once, with the cause as reason and the message as error, phase kept',
      comp({ phase: 'powering_off', status: 'power_off_gracefully_called', lastAction: 'powering_off_gracefully' }),
      dead,
      {
        rule: 'U1',
        phase: 'powering_off',
        override: 'on_hold',
        disable: false,
        reason: 'bmc_unreachable',
        error: `Power unknown (bmc_unreachable): ${dead.error}`,
        powerUnknownSince: now,
        clearActual: false,
        resetCounters: false,
      },
    ],
    ['a shutdown wanted is not read as on (rule 3) nor off (rule 1)', comp({ desiredKernel: '' }), dead, { rule: 'U1', phase: '' }],
    [
      'a boot wanted is not read as off (rule 2)',
      comp({ phase: 'powering_on' }),
      dead,
      { rule: 'U1', phase: 'powering_on', reason: 'bmc_unreachable' },
    ],
    [
      'still unknown within power_unknown_timeout: held, the run keeps its start',
      held(59),
      dead,
      { rule: 'U1', powerUnknownSince: ago(59) },
    ],
    [
      'the cause may change within a run (new words)',
      held(30),
      login,
      { rule: 'U1', reason: 'bmc_auth_failed', error: `Power unknown (bmc_auth_failed): ${login.error}`, powerUnknownSince: ago(30) },
    ],
    [
      'unknown for power_unknown_timeout: failed with the cause and the message',
      held(60),
      dead,
      {
        rule: 'U2',
        override: 'failed',
        disable: true,
        reason: 'bmc_unreachable',
        error: `Power unknown for 60 s (bmc_unreachable): ${dead.error}`,
      },
    ],
    [
      'a wrong password fails with its own reason',
      held(61, { failureReason: 'bmc_auth_failed' }),
      login,
      { rule: 'U2', reason: 'bmc_auth_failed' },
    ],
    [
      'an old start of a node not held (the power was known since) starts a new run',
      comp({ status: 'power_on_called', powerUnknownSince: ago(1000) }),
      dead,
      { rule: 'U1', powerUnknownSince: now },
    ],
    [
      'a reason an action recorded after the hold does not restart the run; the cause is written back',
      held(61, { failureReason: 'power_off_timeout', error: 'Node did not power off within 3 s; forcing it off' }),
      dead,
      { rule: 'U2', reason: 'bmc_unreachable' },
    ],
    [
      'already failed stays failed',
      comp({ status: 'failed', failureReason: 'power_on_timeout' }),
      dead,
      { rule: 'U2', override: 'failed', disable: true },
    ],
  ];
  it.each(rows)('%s', (_name, c, p, expected) => {
    expect(decide(c, p, cfs(), o, now)).toMatchObject(expected);
  });

  it('a node already failed keeps its reason and error', () => {
    const d = decide(comp({ status: 'failed', failureReason: 'power_on_timeout' }), dead, cfs(), o, now);
    expect(d.reason).toBeUndefined();
    expect(d.error).toBeUndefined();
  });

  it('the same cause pass after pass keeps its first words: one hold, one event', () => {
    expect(decide(held(5), dead, cfs(), o, now).error).toBeUndefined();
  });

  it('power_unknown_timeout 0 fails at the first unknown read', () => {
    expect(decide(comp(), dead, cfs(), { ...o, powerUnknownTimeout: 0 }, now)).toMatchObject({ rule: 'U2', reason: 'bmc_unreachable' });
  });

  it('no CFS record still fails at once (0-cfs before the unknown rows)', () => {
    expect(decide(comp(), dead, undefined, o, now)).toMatchObject({ rule: '0-cfs' });
  });

  it('a known read ends the run: the hold, its error and reason are cleared, the rule is the usual one', () => {
    const d = decide(held(30, { phase: 'powering_off' }), on, cfs(), o, now);
    expect(d).toMatchObject({ rule: '6', phase: 'powering_off', override: '', reason: '', error: '', powerUnknownSince: null });
    // A rule with its own reason keeps it.
    expect(decide(held(30, { lastAction: 'powering_on', lastActionAt: ago(121) }), off, cfs(), o, now)).toMatchObject({
      rule: '2',
      reason: 'power_on_timeout',
    });
  });

  it('a single unknown read between known ones does not fail a node', () => {
    const first = decide(comp(), dead, cfs(), o, now);
    expect(first.override).toBe('on_hold');
    const back = decide(held(1), on, cfs(), o, now);
    expect(back).toMatchObject({ override: '', reason: '', powerUnknownSince: null });
    // The next unknown read, long after the first run began, starts a new run.
    const again = decide(comp({ powerUnknownSince: null }), dead, cfs(), o, new Date(now.getTime() + 600_000));
    expect(again.rule).toBe('U1');
  });

  it("a reason that is not unknown power's is not cleared by a known read", () => {
    const d = decide(comp({ status: 'power_on_called', failureReason: 'bmc_unreachable', error: 'switch failed' }), on, cfs(), o, now);
    expect(d.reason).toBeUndefined();
  });
});
