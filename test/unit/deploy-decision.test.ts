/** The disk deploy rows of the status decision, the heartbeat order and the root device hints, as tables. */
import { describe, expect, it } from 'vitest';
import { decideWithDeploy, type DeployView } from '../../src/domain/deploy-decision.ts';
import { heartbeatAllowed, matchDisk, type DeployState, type HeartbeatState } from '../../src/domain/deploy.ts';
import type { DecisionInput } from '../../src/domain/status-decision.ts';
import type { ConfigComponent, PowerState } from '../../src/adapters/ports.ts';

const now = new Date('2026-01-01T00:10:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const o = { maxPowerOnWaitTime: 120, maxBootWaitTime: 600, deployHeartbeatTimeout: 60, powerUnknownTimeout: 60 };
const comp = (p: Partial<DecisionInput> = {}): DecisionInput => ({
  phase: 'powering_on',
  status: 'power_on_called',
  lastAction: 'powering_on',
  lastActionFailed: false,
  lastActionAt: ago(5),
  desiredKernel: 'k',
  desiredKernelParameters: 'p bootorch_deploy=1',
  desiredInitrd: 'i',
  desiredConfiguration: '',
  actualKernel: '',
  actualKernelParameters: '',
  actualInitrd: '',
  error: '',
  failureReason: '',
  powerUnknownSince: null,
  ...p,
});
const on: PowerState = { state: 'on', error: '' };
const off: PowerState = { state: 'off', error: '' };
const cfs: ConfigComponent = { id: 'x', desiredConfig: '', configurationStatus: 'configured', enabled: true, errorCount: 0, tags: {} };
const deploy = (state: DeployState, p: Partial<DeployView> = {}): DeployView => ({
  state,
  reason: '',
  message: '',
  heartbeatAt: ago(1),
  stateAt: ago(1),
  ...p,
});

describe('decideWithDeploy', () => {
  it.each([
    ['pending, off: power on into the ramdisk', deploy('pending'), off, {}, '2', 'powering_on', ''],
    ['pending, on, within the boot wait', deploy('pending'), on, {}, '5', 'powering_on', ''],
    [
      'pending, on, a stale matching actual state is not a report',
      deploy('pending'),
      on,
      { actualKernel: 'k', actualKernelParameters: 'p bootorch_deploy=1', actualInitrd: 'i' },
      '5',
      'powering_on',
      '',
    ],
    ['downloading', deploy('downloading'), on, {}, 'D3', 'deploying', ''],
    ['writing', deploy('writing'), on, {}, 'D4', 'writing', ''],
    ['written', deploy('written'), on, {}, 'D5', 'switching_to_disk', ''],
    ['booting from disk, off mid-cycle', deploy('booting_disk'), off, {}, 'D7', 'booting_disk', ''],
    ['booting from disk, no report in time', deploy('booting_disk', { stateAt: ago(700) }), on, {}, 'D6', '', 'boot_never_reported'],
    ['failed, on: power off', deploy('failed', { reason: 'checksum_mismatch' }), on, {}, 'D1', 'powering_off', 'checksum_mismatch'],
    ['failed, off: fail', deploy('failed', { reason: 'checksum_mismatch' }), off, {}, 'D2', '', 'checksum_mismatch'],
    ['silent agent, on', deploy('downloading', { heartbeatAt: ago(61) }), on, {}, 'D1', 'powering_off', 'heartbeat_timeout'],
    ['silent agent, off', deploy('writing', { heartbeatAt: ago(61) }), off, {}, 'D2', '', 'heartbeat_timeout'],
    [
      'agent never heartbeat since starting',
      deploy('starting', { heartbeatAt: null, stateAt: ago(61) }),
      on,
      {},
      'D1',
      'powering_off',
      'heartbeat_timeout',
    ],
    ['active: done as a desired boot', deploy('active'), on, {}, '4b', '', ''],
  ] as const)('%s', (_what, d, power, c, rule, phase, reason) => {
    const r = decideWithDeploy(comp(c), d, power, cfs, o, now);
    expect({ rule: r.rule, phase: r.phase, reason: r.reason ?? '' }).toEqual({ rule, phase, reason });
    if (rule === 'D5') expect(r.resetCounters).toBe(true);
    if (rule === 'D2' || rule === 'D6') expect({ override: r.override, disable: r.disable }).toEqual({ override: 'failed', disable: true });
  });

  it('written: counters reset on entry only; a switch whose deploy went back to written is marked failed', () => {
    expect(decideWithDeploy(comp({ phase: 'writing' }), deploy('written'), on, cfs, o, now).resetCounters).toBe(true);
    const switched = comp({ phase: 'switching_to_disk', lastAction: 'switching_to_disk', lastActionAt: ago(3) });
    const inFlight = decideWithDeploy(switched, deploy('written', { stateAt: ago(10) }), on, cfs, o, now);
    expect({ reset: inFlight.resetCounters, failed: inFlight.lastActionFailed }).toEqual({ reset: false, failed: undefined });
    expect(decideWithDeploy(switched, deploy('written', { stateAt: ago(1) }), on, cfs, o, now).lastActionFailed).toBe(true);
  });

  const dead: PowerState = { state: 'unknown', cause: 'bmc_unreachable', error: 'unreachable: no answer' };
  it.each([
    ['failed: no power-off while the power is unknown', deploy('failed', { reason: 'checksum_mismatch' }), 'U1', 'writing'],
    ['silent agent: the same', deploy('writing', { heartbeatAt: ago(61) }), 'U1', 'writing'],
    ['written: no switch to disk while the power is unknown', deploy('written'), 'U1', 'writing'],
    ['pending: the diskless rows for unknown', deploy('pending'), 'U1', 'writing'],
    ['writing: the agent runs, no power is read', deploy('writing'), 'D4', 'writing'],
    ['booting from disk: waits for the report', deploy('booting_disk'), 'D7', 'booting_disk'],
  ] as const)('unknown power, %s', (_what, d, rule, phase) => {
    const r = decideWithDeploy(comp({ phase: 'writing', status: 'stable' }), d, dead, cfs, o, now);
    expect({ rule: r.rule, phase: r.phase }).toEqual({ rule, phase });
    if (rule === 'U1') expect({ override: r.override, reason: r.reason }).toEqual({ override: 'on_hold', reason: 'bmc_unreachable' });
  });

  it('without a deploy, decides as the diskless table', () => {
    expect(decideWithDeploy(comp(), undefined, off, cfs, o, now).rule).toBe('2');
  });
});

describe('heartbeatAllowed', () => {
  it.each([
    ['pending', 'starting', true],
    ['pending', 'written', true],
    ['downloading', 'downloading', true],
    ['verifying', 'downloading', false],
    ['writing', 'failed', true],
    ['written', 'failed', false],
    ['written', 'active', false],
    ['booting_disk', 'active', true],
    ['active', 'active', true],
    ['failed', 'starting', false],
    ['booting_disk', 'starting', false],
  ] as const)('%s -> %s: %s', (from, to, ok) => {
    expect(heartbeatAllowed(from as DeployState, to as HeartbeatState)).toBe(ok);
  });
});

describe('matchDisk', () => {
  const disks = [
    { name: 'vdb', sizeBytes: 8 * 2 ** 30, serial: 'B' },
    { name: 'vda', sizeBytes: 32 * 2 ** 30 + 5, serial: 'A' },
  ];
  it.each([
    [undefined, 'vda'],
    [{ size: 8 }, 'vdb'],
    [{ serial: 'A', size: 32 }, 'vda'],
    [{ name: 'vdb', serial: 'A' }, undefined],
    [{ size: 16 }, undefined],
  ])('%j -> %s', (hints, name) => {
    expect(matchDisk(disks, hints)?.name).toBe(name);
  });
});
