/**
 * power-off-graceful (BOS operators/power_off_graceful.py). Action `powering_off_gracefully`,
 * counter power_off_graceful_attempts.
 * Selects:
 * - enabled components whose status is power_off_pending,
 * - not in a paused or aborted session,
 * - known to HSM.
 * Does: one PCS `Soft-Off` per chunk, then schedules the forceful operator for when
 * max_power_off_wait_time has passed.
 */
import { actionOperator } from '../engine/operator.ts';
import { selectComponents } from '../db/engine/components.ts';
import { inInventory } from './common.ts';

export const powerOffGraceful = actionOperator({
  name: 'power-off-graceful',
  action: 'powering_off_gracefully',
  counter: 'power_off_graceful_attempts',
  exhaustedReason: 'power_off_timeout',
  async select(ctx) {
    const rows = await selectComponents(ctx.pool, { enabled: true, statuses: ['power_off_pending'], excludePausedSessions: true });
    return inInventory(ctx, rows);
  },
  async act(ctx, chunk) {
    await ctx.adapters.power.transition('Soft-Off', chunk.map((c) => c.id), 1);
  },
  async after(ctx) {
    await ctx.wake('power-off-forceful', ctx.options.max_power_off_wait_time + 0.5);
    await ctx.kicker.kickNow(['status']);
  },
});
