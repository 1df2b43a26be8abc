/**
 * power-off-graceful (BOS operators/power_off_graceful.py). Action `powering_off_gracefully`,
 * counter power_off_graceful_attempts.
 * Selects:
 * - enabled components whose status is power_off_pending,
 * - not in a paused or aborted session,
 * - known to HSM.
 * Does (its action jobs, a batch at a time): one PCS `Soft-Off` per batch, then, per component, a
 * decision of the forceful operator delayed by max_power_off_wait_time, and status now.
 */
import { actionOperator } from '../engine/action-operator.ts';
import { afterPowerOff, alreadyIn } from './escalation.ts';

export const powerOffGraceful = actionOperator({
  name: 'power-off-graceful',
  action: 'powering_off_gracefully',
  counter: 'power_off_graceful_attempts',
  exhaustedReason: 'power_off_timeout',
  selection: () => ({ enabled: true, statuses: ['power_off_pending'], excludePausedSessions: true }),
  async perform(ctx, chunk) {
    await ctx.adapters.power.transition(
      'Soft-Off',
      chunk.map((c) => c.id),
      1,
    );
    return new Map();
  },
  next: afterPowerOff,
  alreadyDone: (ctx, rows) => alreadyIn(ctx, rows, 'off'),
});
