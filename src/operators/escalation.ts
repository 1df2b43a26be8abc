/**
 * What follows a power call, as scheduler requests: the waits of the owning session's policy (or the
 * options) decide when the next operator looks again. Shared by the power operators, so the
 * escalation is written once.
 */
import type { ActionOperatorSpec } from '../engine/action-operator.ts';
import { effectiveWaits } from '../engine/selection.ts';

/** After a power-off call: the forceful operator once max_power_off_wait_time is over, status now. */
export const afterPowerOff: ActionOperatorSpec['next'] = (ctx, acted) => ({
  wake: [...new Set(acted.map((c) => effectiveWaits(c, ctx.options).maxPowerOffWaitTime))].map((w) => ['power-off-forceful', w + 0.5]),
  kick: ['status'],
});

/** After a power-on call: status now, and when the node should be on, and when it should have reported. */
export const afterPowerOn: ActionOperatorSpec['next'] = (ctx, acted) => ({
  wake: [
    ...new Set(
      acted.flatMap((c) => {
        const w = effectiveWaits(c, ctx.options);
        return [w.maxPowerOnWaitTime, w.maxBootWaitTime];
      }),
    ),
  ].map((w) => ['status', w + 0.5]),
  kick: ['status'],
});
