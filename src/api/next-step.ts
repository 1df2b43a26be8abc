/**
 * What happens next to a node, and what its operator should do, in words: the second half of
 * explain. From the node's stored state, what it waits for (api/waits.ts), its session and the
 * options, so it cannot say something the engine's own waits contradict: "power-on retried at 14:05
 * if still off", "nothing more: bootorch has given up on it; retry it once its BMC answers".
 * Pure; the matching action is one the console offers as a button.
 */
import type { EngineComponent } from '../db/components/select.ts';
import type { SessionRow } from '../db/schema.ts';
import type { Options } from '../domain/options.ts';
import { FAILURE_REASONS, type FailureReason } from '../domain/failures.ts';
import { clockTime } from '../domain/blocked.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { retryPolicy } from '../engine/action-operator.ts';
import type { Wait } from './waits.ts';

export type SuggestedAction = 'none' | 'retry' | 'enable' | 'resume_session';

export interface NextStep {
  next: string;
  nextAt: Date | null;
  advice: string | null;
  action: SuggestedAction;
}

/** What to do about a failed node, by its reason; every reason ends with retrying it. */
const FAILED_ADVICE: Record<FailureReason, string> = {
  power_off_timeout: "Check the node's BMC and why it does not power off (a hung OS ignores graceful power-off), then retry it.",
  power_on_timeout: "Check the node's BMC, its power supply and its console for why it stays off, then retry it.",
  boot_never_reported:
    "It powered on but never reported its boot: read its console (stuck in firmware, PXE or the image's boot), check that its reporter runs, then retry it.",
  booted_wrong_artifacts:
    'It booted other artifacts than the desired ones: check its boot parameters in BSS and its boot order, then retry it.',
  configuration_failed: "CFS could not configure it: read the CFS session's log for this node, fix the configuration, then retry it.",
  configuration_unknown: 'CFS reports no valid configuration status: check that the configuration exists in CFS, then retry it.',
  service_unavailable: 'An outside service failed on it: check that service, then retry it.',
  bmc_unreachable: "Its BMC did not answer: check the BMC's network and that the BMC is up, then retry it.",
  bmc_auth_failed: "Its BMC refused the login: fix the BMC's credentials, then retry it.",
  bmc_timeout: 'Its BMC took the connection but did not answer in time: check or reset the BMC, then retry it.',
  bmc_error: 'Its BMC answered with an error: read the error, check or reset the BMC, then retry it.',
  local_resources:
    "bootorch ran out of open files or local ports calling its BMC: raise the worker's open-file limit (LimitNOFILE) or lower BOOTORCH_BMC_KEEP_CONNECTIONS, then retry it.",
  not_in_inventory: 'The inventory (HSM), PCS or CFS does not know it: add it there (or remove it from bootorch), then retry it.',
  boot_parameters_failed: "BSS refused its boot parameters: check the boot set's kernel, initrd and parameters, then retry it.",
  retry_limit: 'It ran out of attempts: read its timeline for what failed each time, then retry it.',
  aborted: 'Its session was aborted while it was being worked on: retry it to finish it.',
  checksum_mismatch: "The image's checksum is not the boot set's: fix the checksum or the image, then retry it.",
  no_matching_disk: "No disk meets the boot set's root device hints: fix the hints, then retry it.",
  write_error: 'Writing the image to its disk failed: check the disk, then retry it.',
  image_unreachable: 'The deploy agent could not download the image: check the image URL from the node, then retry it.',
  heartbeat_timeout: "The deploy agent stopped heartbeating: read the node's console, then retry it.",
};

const POWER_UNKNOWN_ADVICE: Record<string, string> = {
  bmc_unreachable: "Check the BMC's network and that the BMC is up.",
  bmc_auth_failed: "Fix the BMC's credentials.",
  bmc_timeout: 'Check the BMC: it takes the connection but does not answer in time.',
  bmc_error: "Read the BMC's error, check or reset the BMC.",
  not_in_inventory: 'Check that PCS knows the node.',
  local_resources: "Not the BMC: raise the worker's open-file limit (LimitNOFILE) or lower BOOTORCH_BMC_KEEP_CONNECTIONS.",
};

export interface NextStepFacts {
  c: EngineComponent;
  wait: Wait;
  session: SessionRow | null;
  options: Options;
  now: Date;
  /** For a node blocked by an outside service: which, and since when. */
  outage?: { service: string; since: Date | null } | null;
}

const at = (from: Date | null, seconds: number): Date | null => (from ? new Date(from.getTime() + seconds * 1000) : null);
const when = (d: Date | null, now: Date) =>
  d === null ? 'after the wait' : d <= now ? 'now (due)' : `at ${clockTime(d)} (in ${Math.ceil((d.getTime() - now.getTime()) / 1000)} s)`;

export function nextStep(f: NextStepFacts): NextStep {
  const { c, wait, session, options, now } = f;
  const w = effectiveWaits(c, options);
  const limit = retryPolicy(c, options);
  const attemptsLeft = (made: number) => (limit < 0 ? 'no attempt limit' : `attempt ${made + 1} of ${limit}`);
  const none = (next: string, advice: string | null = null): NextStep => ({ next, nextAt: null, advice, action: 'none' });
  switch (wait.kind) {
    case 'failed': {
      const reason = c.failureReason as FailureReason;
      return {
        next: `Nothing more: bootorch has given up on it (${FAILURE_REASONS[reason] ?? c.failureReason ?? 'failed'}) and will not act on it again.`,
        nextAt: null,
        advice: FAILED_ADVICE[reason] ?? 'Read its error and timeline, then retry it.',
        action: 'retry',
      };
    }
    case 'nothing':
      // Its "desired state" here is its rescue image (db/components/select.ts); the stored one waits for the unrescue.
      if (c.rescued)
        return none(
          'Nothing: it runs its rescue image and stays there; an UNRESCUE session boots it back into its desired state (docs/rescue.md).',
        );
      return none(
        c.session && session?.status === 'running'
          ? `Nothing: it reached its desired state; session ${c.session} goes on with its other nodes.`
          : 'Nothing: it is in its desired state and no session is working on it.',
      );
    case 'disabled':
      return {
        next: 'Nothing: it is disabled, so no operator acts on it.',
        nextAt: null,
        advice: 'Enable it to have bootorch take it to its desired state, or include it in a new session.',
        action: 'enable',
      };
    case 'session_paused':
      if (session?.aborted) return none(`Session ${c.session} was aborted: bootorch stops its nodes where they are and disables them.`);
      return {
        next: `Nothing new starts until session ${c.session} is resumed (actions already sent finish).`,
        nextAt: null,
        advice: `Resume session ${c.session} once the cause is dealt with${session?.pauseReason ? ` (${session.pauseReason})` : ''}.`,
        action: 'resume_session',
      };
    case 'outside_service': {
      const svc = f.outage?.service ?? 'the outside service';
      const since = f.outage?.since ? ` since ${clockTime(f.outage.since)}` : '';
      return none(
        `Waiting for ${svc} (failing${since}): bootorch asks again on each pass and goes on as soon as it answers; the node has not failed and no attempt is counted against it.`,
        `Check ${svc} (its health and its logs). Nothing to do on the node itself.`,
      );
    }
    case 'power_unknown': {
      const failAt = at(c.powerUnknownSince ?? now, w.powerUnknownTimeout);
      return {
        next: `Its power cannot be read: bootorch re-reads it on each pass and sends no power action; if still unknown ${when(failAt, now)}, it fails with the cause (${c.failureReason}).`,
        nextAt: failAt,
        advice: POWER_UNKNOWN_ADVICE[c.failureReason] ?? "Check the node's BMC.",
        action: 'none',
      };
    }
    case 'rollout_admission':
      return none(
        "Admitted by the session's rollout when an in-flight slot frees (or once the canary has succeeded); then it is powered off and booted.",
      );
    case 'status_evaluation': {
      const due = at(now, options.polling_frequency);
      return {
        next: `The status operator decides its next step on its next pass (${when(due, now)} at the latest).`,
        nextAt: due,
        advice: null,
        action: 'none',
      };
    }
    case 'power_on':
      return none(`Power-on is due: the power-on operator sends it on its next pass (${attemptsLeft(c.powerOnAttempts)}).`);
    case 'power_off':
      return none(`Graceful power-off is due: sent on the next pass (${attemptsLeft(c.powerOffGracefulAttempts)}).`);
    case 'power_on_or_boot_report': {
      const onBy = at(c.lastActionAt, w.maxPowerOnWaitTime);
      const bootBy = at(c.lastActionAt, w.maxBootWaitTime);
      const nextAt = onBy && onBy > now ? onBy : bootBy;
      return {
        next: `Waiting for it to come on and report its boot: if still off ${when(onBy, now)}, power-on is sent again (${attemptsLeft(c.powerOnAttempts)}); if it has not reported the desired boot ${when(bootBy, now)}, it is rebooted.`,
        nextAt,
        advice: null,
        action: 'none',
      };
    }
    case 'forceful_power_off': {
      const by = at(c.lastActionAt, w.maxPowerOffWaitTime);
      const graceful = c.status === 'power_off_gracefully_called';
      return {
        next: graceful
          ? `Waiting for it to power off: if still on ${when(by, now)}, it is powered off forcefully.`
          : `Waiting for the forced power-off: if still on ${when(by, now)}, it is sent again (${attemptsLeft(c.powerOffForcefulAttempts)}), then failed.`,
        nextAt: by,
        advice: null,
        action: 'none',
      };
    }
    case 'configuration':
      return none('Waiting for CFS to configure it: done when CFS reports it configured, failed if CFS reports the configuration failed.');
    case 'disk_deploy':
      return none(
        `${wait.description}; failed (heartbeat_timeout) if the deploy agent goes quiet for ${options.deploy_heartbeat_timeout} s.`,
      );
  }
}
