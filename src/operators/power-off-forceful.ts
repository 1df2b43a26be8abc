/**
 * power-off-forceful (BOS operators/power_off_forceful.py). Action `powering_off_forcefully`,
 * counter power_off_forceful_attempts.
 * Selects:
 * - enabled components whose status is power_off_gracefully_called or power_off_forcefully_called,
 * - whose last action is older than max_power_off_wait_time,
 * - not in a paused or aborted session,
 * - known to HSM.
 * Does: one PCS `Force-Off` per chunk; again every max_power_off_wait_time until the node is off or
 * the attempts run out (then failed: power_off_timeout).
 */
import { actionOperator } from '../engine/operator.ts';
import { selectComponents } from '../db/engine/components.ts';
import { inInventory } from './common.ts';

export const powerOffForceful = actionOperator({
  name: 'power-off-forceful',
  action: 'powering_off_forcefully',
  counter: 'power_off_forceful_attempts',
  exhaustedReason: 'power_off_timeout',
  async select(ctx) {
    const before = new Date(ctx.now().getTime() - ctx.options.max_power_off_wait_time * 1000);
    const rows = await selectComponents(ctx.pool, {
      enabled: true, statuses: ['power_off_gracefully_called', 'power_off_forcefully_called'],
      lastActionBefore: before, excludePausedSessions: true,
    });
    return inInventory(ctx, rows);
  },
  async act(ctx, chunk) {
    await ctx.adapters.power.transition('Force-Off', chunk.map((c) => c.id), 1);
    return chunk.map((c) => ({ id: c.id, error: `Node did not power off gracefully within ${ctx.options.max_power_off_wait_time} s; forcing it off`, reason: 'power_off_timeout' as const }));
  },
  async after(ctx) {
    await ctx.wake('power-off-forceful', ctx.options.max_power_off_wait_time + 0.5);
    await ctx.kicker.kickNow(['status']);
  },
});
