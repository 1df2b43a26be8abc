/**
 * The status operator's decision table (BOS reference §4.1), as a pure function: from a component,
 * its power state (PCS) and its CFS record, the phase it is in and the side effects. First match wins.
 * It is the sole writer of `phase`. Unlike BOS, which reads a PCS error or `undefined` as "not off"
 * (so a dead BMC looks like a node that will not power off), a power read that failed is unknown and
 * has its own rows (U1, U2), before any row that reads the power.
 */
import type { ConfigComponent, PowerState } from './readings.ts';
import type { FailureReason } from './failures.ts';

/** The disk deploy rows (domain/deploy-decision.ts). */
export type DeployRule = 'D1' | 'D2' | 'D3' | 'D4' | 'D5' | 'D6' | 'D7';

export interface DecisionInput {
  phase: string;
  status: string;
  lastAction: string;
  lastActionFailed: boolean;
  lastActionAt: Date | null;
  desiredKernel: string;
  desiredKernelParameters: string;
  desiredInitrd: string;
  desiredConfiguration: string;
  actualKernel: string;
  actualKernelParameters: string;
  actualInitrd: string;
  error: string;
  failureReason: string;
  /** When the node's power was first read unknown in the current run of unknown reads (null: known). */
  powerUnknownSince: Date | null;
}

export interface DecisionOptions {
  maxPowerOnWaitTime: number;
  maxBootWaitTime: number;
  /** Seconds a node's power may stay unknown before it fails with the cause (power_unknown_timeout). */
  powerUnknownTimeout: number;
}

export interface Decision {
  /** Which row of the table matched (for explain and events). */
  rule: '0-pcs' | '0-cfs' | 'U1' | 'U2' | '1' | '1p' | '2' | '3' | '4a' | '4b' | '4c' | '4d' | '4e' | '4f' | '5' | '6' | DeployRule;
  phase: string;
  override: '' | 'on_hold' | 'failed';
  disable: boolean;
  error?: string;
  /** Set the classified problem (kept as failure_reason; it is *the* reason once the component fails). */
  reason?: FailureReason | '';
  /** last_action.failed = true: power-on timed out, so power-on fires again. */
  lastActionFailed?: boolean;
  /** Leaving powering_off: forget what the node had booted. */
  clearActual: boolean;
  /** Phase becomes '': attempt counters back to 0. */
  resetCounters: boolean;
  /** powerUnknownSince to store; undefined leaves it as it is. */
  powerUnknownSince?: Date | null;
  /** Human words for the rule (explain). */
  why: string;
}

export function artifactsMatch(c: DecisionInput): boolean {
  return c.desiredKernel === c.actualKernel && c.desiredInitrd === c.actualInitrd && c.desiredKernelParameters === c.actualKernelParameters;
}

const secondsSince = (d: Date | null, now: Date) => (d ? (now.getTime() - d.getTime()) / 1000 : Infinity);

/** A rule's result completed with what follows from the phase it leaves and enters. */
export function finishDecision(c: Pick<DecisionInput, 'phase'>, d: Omit<Decision, 'clearActual' | 'resetCounters'>): Decision {
  return { ...d, resetCounters: d.phase === '', clearActual: c.phase === 'powering_off' && d.phase !== 'powering_off' };
}

/**
 * Whether a node is held because its power is unknown (rule U1 put it there): on hold with a run of
 * unknown reads begun. Session setup and enabling clear the run, so an old one never counts; not the
 * reason, which an action's outcome recorded after the hold may have replaced.
 */
export function heldForUnknownPower(c: Pick<DecisionInput, 'status' | 'powerUnknownSince'>): boolean {
  return c.status === 'on_hold' && c.powerUnknownSince !== null;
}

/**
 * Rows U1 and U2: a power read that failed is not a state, so nothing follows from it. The node is held
 * (on_hold: no power operator selects it, so no attempt is counted against a dead BMC) with the cause
 * as its reason and error at once; its phase stays what it was. Unknown for power_unknown_timeout
 * seconds, counted from the first unknown read with no known read since, it fails with the cause.
 */
function unknownPower(c: DecisionInput, power: Extract<PowerState, { state: 'unknown' }>, o: DecisionOptions, now: Date): Decision {
  const finish = (d: Omit<Decision, 'clearActual' | 'resetCounters'>) => finishDecision(c, d);
  if (c.status === 'failed') {
    return finish({ rule: 'U2', phase: c.phase, override: 'failed', disable: true, why: 'failed; its power is unknown' });
  }
  const ongoing = heldForUnknownPower(c);
  const since = ongoing && c.powerUnknownSince ? c.powerUnknownSince : now;
  const held = secondsSince(since, now);
  if (held >= o.powerUnknownTimeout) {
    return finish({
      rule: 'U2',
      phase: c.phase,
      override: 'failed',
      disable: true,
      reason: power.cause,
      error: `Power unknown for ${Math.round(held)} s (${power.cause}): ${power.error}`,
      powerUnknownSince: since,
      why: 'power unknown for power_unknown_timeout: failed with the cause',
    });
  }
  // The same cause, pass after pass, is one hold: its first words stay (one event), whatever call failed since.
  const same = ongoing && c.failureReason === power.cause;
  return finish({
    rule: 'U1',
    phase: c.phase,
    override: 'on_hold',
    disable: false,
    reason: power.cause,
    ...(same ? {} : { error: `Power unknown (${power.cause}): ${power.error}` }),
    powerUnknownSince: since,
    why: 'power unknown: held, no power action; failed if still unknown after power_unknown_timeout',
  });
}

export function decide(
  c: DecisionInput,
  power: PowerState | undefined,
  cfs: ConfigComponent | undefined,
  o: DecisionOptions,
  now: Date,
): Decision {
  if (power?.state === 'unknown' && cfs) return unknownPower(c, power, o, now);
  const d = decideKnown(c, power, cfs, o, now);
  return power ? powerKnownAgain(c, d) : d;
}

/**
 * A known read ends a run of unknown ones: the first unknown read of a later run starts the count
 * again, and a node held for unknown power (U1) loses that error and reason unless its rule sets its own.
 */
export function powerKnownAgain(c: DecisionInput, d: Decision): Decision {
  return {
    ...d,
    ...(c.powerUnknownSince ? { powerUnknownSince: null } : {}),
    ...(heldForUnknownPower(c) && d.reason === undefined && d.override !== 'failed' ? { reason: '' as const, error: '' } : {}),
  };
}

/** The table for a node whose power is known (or that PCS or CFS has no record of): rows 0 to 6. */
function decideKnown(
  c: DecisionInput,
  power: PowerState | undefined,
  cfs: ConfigComponent | undefined,
  o: DecisionOptions,
  now: Date,
): Decision {
  const finish = (d: Omit<Decision, 'clearActual' | 'resetCounters'>) => finishDecision(c, d);
  // BOS leaves such a node on_hold and disabled, so it silently drops out of the session's failure
  // count; bootorch fails it (same error text) so the session status shows it.
  if (!power) {
    return finish({
      rule: '0-pcs',
      phase: '',
      override: 'failed',
      disable: true,
      reason: 'not_in_inventory',
      error: 'Component information was not returned by pcs',
      why: 'PCS returned no power state for the node',
    });
  }
  if (!cfs) {
    return finish({
      rule: '0-cfs',
      phase: '',
      override: 'failed',
      disable: true,
      reason: 'not_in_inventory',
      error: 'Component information was not returned by cfs',
      why: 'CFS has no component record for the node',
    });
  }
  // A component already failed keeps its override and is disabled; its phase is still computed.
  const failed = c.status === 'failed';
  const keep = failed ? ({ override: 'failed', disable: true } as const) : ({ override: '', disable: false } as const);
  const off = power.state === 'off';
  // BOS calls such a node shut down at once, even when a power-on it sent moments earlier (an older
  // session's, before a newer session took the node) is still on its way: the node then comes on after
  // it was disabled as off. bootorch waits for that power-on to land or time out; rule 3 then turns it off.
  const powerOnInFlight =
    c.lastAction === 'powering_on' && !c.lastActionFailed && secondsSince(c.lastActionAt, now) <= o.maxPowerOnWaitTime;
  if (off && c.desiredKernel === '' && powerOnInFlight && !failed) {
    return finish({
      rule: '1p',
      phase: 'powering_on',
      ...keep,
      why: 'off and the desired state is off, but a power-on sent earlier may still land: wait for it',
    });
  }
  if (off && c.desiredKernel === '') {
    return finish({
      rule: '1',
      phase: '',
      override: keep.override,
      disable: true,
      ...(failed ? {} : { reason: '' as const, error: '' }),
      why: 'off, and the desired state is off',
    });
  }
  if (off) {
    const timedOut = c.lastAction === 'powering_on' && !c.lastActionFailed && secondsSince(c.lastActionAt, now) > o.maxPowerOnWaitTime;
    return finish({
      rule: '2',
      phase: 'powering_on',
      ...keep,
      ...(timedOut
        ? { lastActionFailed: true, reason: 'power_on_timeout' as const, error: `Node still off ${o.maxPowerOnWaitTime} s after power-on` }
        : {}),
      why: timedOut ? 'still off after max_power_on_wait_time: power-on will be retried' : 'off, and it should be booted',
    });
  }
  if (c.desiredKernel === '') {
    return finish({ rule: '3', phase: 'powering_off', ...keep, why: 'on, and the desired state is off' });
  }
  if (artifactsMatch(c)) {
    if (cfs.desiredConfig !== c.desiredConfiguration) {
      return finish({
        rule: '4a',
        phase: 'configuring',
        ...keep,
        why: 'booted the desired artifacts; CFS must be given the desired configuration',
      });
    }
    if (c.desiredConfiguration === '') {
      return finish({
        rule: '4b',
        phase: '',
        override: keep.override,
        disable: true,
        ...(failed ? {} : { reason: '' as const, error: '' }),
        why: 'booted the desired artifacts; no configuration wanted',
      });
    }
    switch (cfs.configurationStatus) {
      case 'configured':
        return finish({
          rule: '4c',
          phase: '',
          override: keep.override,
          disable: true,
          ...(failed ? {} : { reason: '' as const, error: '' }),
          why: 'booted the desired artifacts and configured',
        });
      case 'failed':
        return finish({
          rule: '4d',
          phase: 'configuring',
          override: 'failed',
          disable: true,
          reason: 'configuration_failed',
          error: 'cfs configuration failed',
          why: 'CFS reports the configuration failed',
        });
      case 'pending':
        return finish({ rule: '4e', phase: 'configuring', ...keep, why: 'waiting for CFS to configure the node' });
      default:
        return finish({
          rule: '4f',
          phase: 'configuring',
          override: 'failed',
          disable: true,
          reason: 'configuration_unknown',
          error: `cfs is not reporting a valid configuration status for this component: ${cfs.configurationStatus}`,
          why: `CFS reports configuration status "${cfs.configurationStatus}"`,
        });
    }
  }
  if (c.lastAction === 'powering_on' && secondsSince(c.lastActionAt, now) <= o.maxBootWaitTime) {
    return finish({ rule: '5', phase: 'powering_on', ...keep, why: 'powered on; waiting for the node to report its boot' });
  }
  // Booted something else, or never reported within max_boot_wait_time: reboot it.
  const reported = c.actualKernel !== '' || c.actualInitrd !== '' || c.actualKernelParameters !== '';
  const afterBoot = c.lastAction === 'powering_on';
  const reason: FailureReason | undefined = afterBoot ? (reported ? 'booted_wrong_artifacts' : 'boot_never_reported') : undefined;
  return finish({
    rule: '6',
    phase: 'powering_off',
    ...keep,
    ...(reason
      ? {
          reason,
          error:
            reason === 'booted_wrong_artifacts'
              ? 'Node booted artifacts other than the desired ones; rebooting'
              : `Node did not report booting within ${o.maxBootWaitTime} s of power-on; rebooting`,
        }
      : {}),
    why: afterBoot ? 'the boot did not produce the desired artifacts in time: reboot' : 'on with other artifacts: power off to reboot',
  });
}
