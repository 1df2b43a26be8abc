/**
 * What follows a power call: the waits of the owning session's policy (or the options) decide when
 * the next operator looks again. Shared by the power operators, so the escalation is written once.
 */
import type { ActionOperatorSpec } from '../engine/action-operator.ts';
import type { EngineContext } from '../engine/operator.ts';
import type { EngineComponent } from '../db/components/select.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { groupBy } from '../domain/lists.ts';

/**
 * After a power-off call: status now, and per component, once its max_power_off_wait_time is over, a
 * delayed decision of the forceful operator (a due job: nothing happens if the node is off by then).
 */
export const afterPowerOff: ActionOperatorSpec['next'] = (ctx, acted) => ({
  later: groupBy(acted, (c) => String(effectiveWaits(c, ctx.options).maxPowerOffWaitTime)).map((rows) => ({
    op: 'power-off-forceful' as const,
    rows,
    seconds: effectiveWaits(rows[0]!, ctx.options).maxPowerOffWaitTime + 0.5,
  })),
  kick: ['status'],
});

/**
 * After a power-on call: status now, and per component, delayed decisions of the status operator when
 * the node should be on (max_power_on_wait_time) and when it should have reported (max_boot_wait_time).
 */
export const afterPowerOn: ActionOperatorSpec['next'] = (ctx, acted) => ({
  later: (['maxPowerOnWaitTime', 'maxBootWaitTime'] as const).flatMap((wait) =>
    groupBy(acted, (c) => String(effectiveWaits(c, ctx.options)[wait])).map((rows) => ({
      op: 'status' as const,
      rows,
      seconds: effectiveWaits(rows[0]!, ctx.options)[wait] + 0.5,
    })),
  ),
  kick: ['status'],
});

/** The ids of these nodes that PCS says are in `state` (on, off): an action taking them there is done. */
export async function alreadyIn(ctx: EngineContext, rows: EngineComponent[], state: 'on' | 'off'): Promise<Set<string>> {
  const power = await ctx.adapters.power.powerStatus(rows.map((c) => c.id));
  return new Set(rows.filter((c) => power.get(c.id)?.state === state).map((c) => c.id));
}
