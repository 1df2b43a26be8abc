/**
 * power-off-forceful (BOS operators/power_off_forceful.py). Action `powering_off_forcefully`,
 * counter power_off_forceful_attempts.
 * Selects:
 * - enabled components whose status is power_off_gracefully_called or power_off_forcefully_called,
 * - whose last action is older than max_power_off_wait_time (measured on the database's clock),
 * - not in a paused or aborted session,
 * - known to HSM.
 * Decides when a component's delayed decision comes due (a due job after the graceful call; the
 * periodic tick is the safety net). Does: one PCS `Force-Off` per batch for the nodes still not off;
 * again every max_power_off_wait_time until the node is off or the attempts run out (then failed:
 * power_off_timeout). bootorch: a node whose power is still being read (pending) is not forced off
 * until it is read; its job is retried, and no new attempt is decided for it while its read is still
 * out (the attempts count Force-Offs, not reads waited for).
 */
import { actionOperator } from '../engine/action-operator.ts';
import { again, type Outcome } from '../engine/outcome.ts';
import { effectiveWaits } from '../engine/selection.ts';
import type { FailureReason } from '../domain/failures.ts';
import { afterPowerOff, alreadyIn } from './escalation.ts';
import type { EngineComponent } from '../db/components/select.ts';
import type { EngineContext } from '../engine/operator.ts';
import type { OperatorName } from '../engine/scheduler.ts';

// A node being powered off because its boot failed keeps that reason (see act).
const BOOT_REASONS = new Set<string>(['boot_never_reported', 'booted_wrong_artifacts']);

/**
 * A node whose power is still being read is not decided on again: at 100,000 standalone nodes its read
 * could wait behind others for longer than three max_power_off_wait_time, and each wait counted an
 * attempt, so nodes that had powered off ran out of attempts (power_off_timeout) with no Force-Off ever
 * sent. It is decided once its read has answered; the operator looks again in 5 s.
 */
export async function powerOffForcefulLimit(
  ctx: EngineContext,
  rows: EngineComponent[],
): Promise<{ rows: EngineComponent[]; wake?: Array<[OperatorName, number]> }> {
  const reading = ctx.adapters.power.stillReading?.(rows.map((r) => r.id));
  if (!reading?.size) return { rows };
  return { rows: rows.filter((r) => !reading.has(r.id)), wake: [['power-off-forceful', 5]] };
}

export const powerOffForceful = actionOperator({
  name: 'power-off-forceful',
  action: 'powering_off_forcefully',
  counter: 'power_off_forceful_attempts',
  exhaustedReason: 'power_off_timeout',
  selection: () => ({
    enabled: true,
    statuses: ['power_off_gracefully_called', 'power_off_forcefully_called'],
    excludePausedSessions: true,
  }),
  ready(ctx, c) {
    const wait = effectiveWaits(c, ctx.options).maxPowerOffWaitTime;
    const since = c.lastActionAt ? (ctx.now().getTime() - c.lastActionAt.getTime()) / 1000 : Infinity;
    const met = since >= wait;
    return {
      criterion: 'max_power_off_wait_time passed since the last power-off call',
      met,
      detail: `${c.lastAction.replace(/_/g, ' ')} sent ${Math.round(since)} s ago; forceful after ${wait} s${met ? '' : `, in ${Math.ceil(wait - since)} s`}`,
    };
  },
  limit: powerOffForcefulLimit,
  async perform(ctx, all) {
    // A node that went off during the wait is done: it is not forced off. One whose BMC is still being
    // asked (its read queued or in flight behind many others: a standalone site at 100,000 nodes) is
    // not known to be on: it is neither forced off nor said not to have powered off. Its job is tried
    // again (backoff) until its power is read, and the status pass moves it on if it is off by then.
    const power = await ctx.adapters.power.powerStatus(all.map((c) => c.id));
    const stillAsking = new Map<string, Outcome>();
    for (const c of all) {
      const p = power.get(c.id);
      if (p?.state === 'unknown' && p.pending)
        stillAsking.set(c.id, {
          kind: 'continue',
          retry: true,
          problem: { error: `Power not read yet, so not forced off: ${p.error}`, reason: p.cause },
        });
    }
    const chunk = all.filter((c) => power.get(c.id)?.state !== 'off' && !stillAsking.has(c.id));
    if (chunk.length === 0) return stillAsking;
    await ctx.adapters.power.transition(
      'Force-Off',
      chunk.map((c) => c.id),
      1,
    );
    // The node is still on after the graceful wait: that is this component's problem until it is off.
    // A node being powered off because its boot failed keeps that reason: firmware ignores a soft-off
    // (real-nodes §6), so forcing it off is the normal way out of a failed boot, not a new failure.
    return new Map([
      ...stillAsking,
      ...chunk.map((c): [string, Outcome] => [
        c.id,
        again({
          error: `Node did not power off within ${effectiveWaits(c, ctx.options).maxPowerOffWaitTime} s; forcing it off`,
          reason: BOOT_REASONS.has(c.failureReason) ? (c.failureReason as FailureReason) : 'power_off_timeout',
        }),
      ]),
    ]);
  },
  next: afterPowerOff,
  alreadyDone: (ctx, rows) => alreadyIn(ctx, rows, 'off'),
});
