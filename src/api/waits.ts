/**
 * What a component waits for, from its stored state alone (no outside calls), so a whole session's
 * remaining nodes can be grouped cheaply. `description` carries this node's numbers; `group` is the
 * words shared by every node in the same situation.
 */
import type { EngineComponent } from '../db/components/select.ts';
import type { Options } from '../domain/options.ts';
import type { SessionRow } from '../db/schema.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { heldForUnknownPower } from '../domain/status-decision.ts';
import { blockingService, clockTime } from '../domain/blocked.ts';

export type WaitKind =
  | 'nothing'
  | 'failed'
  | 'disabled'
  | 'session_paused'
  | 'rollout_admission'
  | 'status_evaluation'
  | 'power_on'
  | 'power_on_or_boot_report'
  | 'power_off'
  | 'forceful_power_off'
  | 'configuration'
  | 'power_unknown'
  | 'disk_deploy'
  | 'outside_service';

/** The disk deploy phases (domain/deploy-decision.ts), in words. */
const DEPLOY_WAITS: Record<string, string> = {
  deploying: 'disk deploy: waiting for the deploy agent to download and verify the image',
  writing: 'disk deploy: waiting for the deploy agent to write the image to the disk',
  switching_to_disk: 'disk deploy: written; the boot device is set to disk and the node power-cycled',
  booting_disk: "disk deploy: booting from disk; waiting for the installed system's first report",
};

export interface Wait {
  kind: WaitKind;
  description: string;
  group: string;
}

/**
 * `outageSince`: for a node blocked by a failing outside service, when it started waiting on it
 * (db/components/blocked.ts outageSince), for the words; the grouping does without.
 */
export function classifyWait(c: EngineComponent, o: Options, now: Date, session: SessionRow | null, outageSince?: Date | null): Wait {
  const since = c.lastActionAt ? Math.round((now.getTime() - c.lastActionAt.getTime()) / 1000) : null;
  const w = effectiveWaits(c, o);
  const ago = since === null ? 'never' : `${since} s ago`;
  if (!c.enabled) {
    if (c.status === 'failed')
      return { kind: 'failed', description: `failed (${c.failureReason || 'unclassified'}): ${c.error}`, group: 'failed' };
    return c.phase === '' && c.status === 'stable'
      ? { kind: 'nothing', description: 'done: in its desired state (or not part of any running session)', group: 'done' }
      : { kind: 'disabled', description: 'disabled: no operator acts on it', group: 'disabled' };
  }
  if (session && (session.paused || session.aborted) && c.status !== 'configuring') {
    return {
      kind: 'session_paused',
      description: `session ${c.session} is paused: ${session.pauseReason ?? ''}`,
      group: `session paused: ${session.pauseReason ?? ''}`,
    };
  }
  if (heldForUnknownPower(c)) {
    const held = c.powerUnknownSince ? Math.round((now.getTime() - c.powerUnknownSince.getTime()) / 1000) : 0;
    return {
      kind: 'power_unknown',
      description: `power unknown for ${held} s (${c.failureReason}): ${c.error}; failed with the cause after ${w.powerUnknownTimeout} s`,
      group: `power unknown (${c.failureReason})`,
    };
  }
  // Not a failure of the node: it waits for the service, and the status pass asks again each time.
  const service = blockingService(c);
  if (service && c.failureReason === 'service_unavailable') {
    const since = outageSince ? ` since ${clockTime(outageSince)}` : '';
    return {
      kind: 'outside_service',
      description: `blocked: ${service} failing${since} (${c.error}); bootorch asks again on each pass and goes on when it answers`,
      group: `blocked: ${service} failing`,
    };
  }
  const deployWait = DEPLOY_WAITS[c.phase];
  if (deployWait) return { kind: 'disk_deploy', description: deployWait, group: deployWait };
  switch (c.status) {
    case 'queued':
      return {
        kind: 'rollout_admission',
        description: 'waiting in the rollout queue for a free in-flight slot (or for the canary to succeed)',
        group: 'waiting for rollout admission',
      };
    case 'on_hold':
    case 'stable':
      return {
        kind: 'status_evaluation',
        description: 'waiting for the status operator to evaluate it (next tick)',
        group: 'waiting for status evaluation',
      };
    case 'power_on_pending':
      return { kind: 'power_on', description: `power-on due (attempt ${c.powerOnAttempts + 1})`, group: 'waiting for power-on' };
    case 'power_on_called':
      return {
        kind: 'power_on_or_boot_report',
        group: 'powered on, waiting for the node to boot and report',
        description: `power-on sent ${ago}; retried if still off after ${w.maxPowerOnWaitTime} s, rebooted if not reporting the desired boot after ${w.maxBootWaitTime} s`,
      };
    case 'power_off_pending':
      return { kind: 'power_off', description: 'graceful power-off due', group: 'waiting for graceful power-off' };
    case 'power_off_gracefully_called':
    case 'power_off_forcefully_called': {
      const left = since === null ? 0 : Math.max(0, w.maxPowerOffWaitTime - since);
      const verb = c.status === 'power_off_gracefully_called' ? 'graceful power-off' : 'forceful power-off';
      return {
        kind: 'forceful_power_off',
        group: 'powering off, forceful power-off after the wait',
        description: `${verb} sent ${ago}; forceful after ${w.maxPowerOffWaitTime} s${left > 0 ? `, in ${left} s` : ', due now'}`,
      };
    }
    case 'configuring':
      return {
        kind: 'configuration',
        description: 'booted the desired image; waiting for CFS to configure it',
        group: 'configuring (CFS)',
      };
    default:
      return { kind: 'status_evaluation', description: `status ${c.status}`, group: `status ${c.status}` };
  }
}
