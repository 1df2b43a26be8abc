/**
 * The status decision for a component with a disk deploy (domain/deploy.ts): rows D1-D9 come before
 * the diskless table (status-decision.ts), which still decides the power-on into the deploy ramdisk
 * (the deploy is pending) and what follows the installed system's first report (active). Pure.
 *
 * | row | deploy | power | phase | |
 * |---|---|---|---|---|
 * | D1 | failed, or agent silent > deploy_heartbeat_timeout | on | powering_off | leave the node powered off |
 * | D2 | the same | off | '' | failed with the deploy's reason, disabled |
 * | D3 | starting, downloading, verifying | any | deploying | the agent runs |
 * | D4 | writing | any | writing | the agent writes the disk |
 * | D5 | written | any | switching_to_disk | deploy-to-disk sets the boot device and power-cycles (attempt counters reset) |
 * | D6 | booting_disk, no report within max_boot_wait_time | any | '' | failed (boot_never_reported), disabled |
 * | D7 | booting_disk | any | booting_disk | waiting for the installed system's report |
 * | - | failed, silent or written | unknown | (diskless table: U1, U2) | held while the power is unknown, failed with the cause past power_unknown_timeout |
 * | - | pending | any | (diskless table, actual state ignored) | power on into the ramdisk; reboot if the agent never starts |
 * | - | pending, no slot of the deploy budget | off | (diskless table) | power-on waits for a slot (operators/deploy-budget.ts); the why says so |
 * | - | active | any | (diskless table, as booted the desired artifacts) | configuration, then done |
 */
import type { ConfigComponent, PowerState } from './readings.ts';
import { AGENT_STATES, type DeployState } from './deploy.ts';
import type { FailureReason } from './failures.ts';
import { decide, finishDecision, powerKnownAgain, type Decision, type DecisionInput, type DecisionOptions } from './status-decision.ts';

export interface DeployView {
  state: DeployState;
  reason: string;
  message: string;
  heartbeatAt: Date | null;
  stateAt: Date;
  /** When the deploy budget admitted it (db/deploys.ts admitDeploys); null or absent: not admitted. */
  admittedAt?: Date | null;
}

export interface DeployDecisionOptions extends DecisionOptions {
  deployHeartbeatTimeout: number;
}

/** The deploy phases, in the order a deploy walks them (explain, the console, the docs). */
export const DEPLOY_PHASES = ['deploying', 'writing', 'switching_to_disk', 'booting_disk'] as const;

const ageSeconds = (d: Date, now: Date) => (now.getTime() - d.getTime()) / 1000;

/** Has the agent been silent for longer than the timeout (counted from the state's start before its first heartbeat)? */
export function heartbeatTimedOut(d: DeployView, timeout: number, now: Date): boolean {
  return AGENT_STATES.includes(d.state) && ageSeconds(d.heartbeatAt ?? d.stateAt, now) > timeout;
}

/** What explain and the status pass say of a node whose deploy waits for a slot (operators/deploy-budget.ts). */
export const BUDGET_WAIT =
  'waiting for the deploy budget (max_concurrent_deploys, deploy_image_bandwidth): it powers on when a running deploy writes its image or fails';

/** A pending deploy on a node that is off and holds no slot (never admitted, or admitted longer ago than a boot takes). */
export function waitsForBudget(d: DeployView, power: PowerState, o: Pick<DecisionOptions, 'maxBootWaitTime'>, now: Date): boolean {
  return d.state === 'pending' && power.state === 'off' && (!d.admittedAt || ageSeconds(d.admittedAt, now) > o.maxBootWaitTime);
}

export function decideWithDeploy(
  c: DecisionInput,
  d: DeployView | undefined,
  power: PowerState | undefined,
  cfs: ConfigComponent | undefined,
  o: DeployDecisionOptions,
  now: Date,
): Decision {
  if (!d || !power || !cfs) return decide(c, power, cfs, o, now);
  const timedOut = heartbeatTimedOut(d, o.deployHeartbeatTimeout, now);
  // Rows that act on the power (D1, D2 power the node off; D5 sets its boot device and cycles it)
  // wait while it is unknown: the table's own rows for unknown power (U1, U2) decide. The others
  // follow the deploy agent or the clock and read no power.
  if (power.state === 'unknown' && (d.state === 'failed' || timedOut || d.state === 'written')) return decide(c, power, cfs, o, now);
  const r = decideDeploy(c, d, timedOut, power, cfs, o, now);
  return power.state === 'unknown' ? r : powerKnownAgain(c, r);
}

function decideDeploy(
  c: DecisionInput,
  d: DeployView,
  timedOut: boolean,
  power: PowerState,
  cfs: ConfigComponent,
  o: DeployDecisionOptions,
  now: Date,
): Decision {
  if (d.state === 'pending') {
    const r = decide({ ...c, actualKernel: '', actualInitrd: '', actualKernelParameters: '' }, power, cfs, o, now);
    return waitsForBudget(d, power, o, now) ? { ...r, why: `${r.why}; ${BUDGET_WAIT}` } : r;
  }
  if (d.state === 'active') {
    const r = decide(
      { ...c, actualKernel: c.desiredKernel, actualInitrd: c.desiredInitrd, actualKernelParameters: c.desiredKernelParameters },
      power,
      cfs,
      o,
      now,
    );
    return { ...r, why: `deployed, and the installed system reported; ${r.why}` };
  }
  const failed = c.status === 'failed';
  const keep = failed ? ({ override: 'failed', disable: true } as const) : ({ override: '', disable: false } as const);
  const finish = (x: Omit<Decision, 'clearActual' | 'resetCounters'>) => finishDecision(c, x);
  if (d.state === 'failed' || timedOut) {
    const reason = (timedOut ? 'heartbeat_timeout' : d.reason || 'write_error') as FailureReason;
    const error = timedOut
      ? `Disk deploy: no heartbeat from the deploy agent for ${o.deployHeartbeatTimeout} s (last: ${d.state})`
      : `Disk deploy failed: ${d.message || reason}`;
    if (power.state !== 'off')
      return finish({ rule: 'D1', phase: 'powering_off', ...keep, reason, error, why: 'the disk deploy failed: power the node off' });
    return finish({
      rule: 'D2',
      phase: '',
      override: 'failed',
      disable: true,
      reason,
      error,
      why: 'the disk deploy failed, and the node is off',
    });
  }
  if (AGENT_STATES.includes(d.state) && d.state !== 'writing')
    return finish({ rule: 'D3', phase: 'deploying', ...keep, why: `the deploy agent runs (${d.state})` });
  if (d.state === 'writing') return finish({ rule: 'D4', phase: 'writing', ...keep, why: 'the deploy agent writes the image to the disk' });
  if (d.state === 'written') {
    // deploy-to-disk moves a deploy back to written when its BMC call failed: after the recorded
    // switch, that marks the switch failed, so the operator tries again (its readiness criterion).
    const switchFailed = c.lastAction === 'switching_to_disk' && !c.lastActionFailed && !!c.lastActionAt && d.stateAt > c.lastActionAt;
    const entering = c.phase !== 'switching_to_disk';
    return {
      ...finish({
        rule: 'D5',
        phase: 'switching_to_disk',
        ...keep,
        ...(switchFailed ? { lastActionFailed: true } : {}),
        why: switchFailed
          ? 'the switch to disk failed: it is tried again'
          : 'the image is written: set the boot device to disk and power-cycle',
      }),
      // The power-on into the ramdisk did its work: the power cycle to disk gets the attempts afresh.
      resetCounters: entering,
    };
  }
  if (ageSeconds(d.stateAt, now) > o.maxBootWaitTime)
    return finish({
      rule: 'D6',
      phase: '',
      override: 'failed',
      disable: true,
      reason: 'boot_never_reported',
      error: `Disk deploy: the installed system did not report within ${o.maxBootWaitTime} s of the boot from disk`,
      why: 'booted from disk, but the installed system never reported',
    });
  return finish({ rule: 'D7', phase: 'booting_disk', ...keep, why: "booting from disk; waiting for the installed system's report" });
}
