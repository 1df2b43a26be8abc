/**
 * Power-on waves (Beyond BOS): at most `powerOnWaveSize` power-on calls per
 * `powerOnWaveIntervalSeconds` (default 60) per session, so a full-machine boot does not stampede the
 * boot infrastructure (TFTP/HTTP, image servers). Nodes held back stay power_on_pending and are taken
 * by a later tick; the operator asks to be woken when the window has room again.
 */
import type { EngineContext } from '../engine/operator.ts';
import type { OperatorName } from '../engine/scheduler.ts';
import type { EngineComponent } from '../db/components/select.ts';
import { recentPowerOns } from '../db/sessions/rollout.ts';
import { groupBy } from '../domain/lists.ts';

export async function powerOnWaves(
  ctx: EngineContext,
  rows: EngineComponent[],
): Promise<{ rows: EngineComponent[]; wake: Array<[OperatorName, number]> }> {
  const out: EngineComponent[] = [];
  const wake: Array<[OperatorName, number]> = [];
  const inWaves = (r: EngineComponent) => !!(r.policy as { powerOnWaveSize?: number } | null)?.powerOnWaveSize;
  const waved = rows.filter(inWaves);
  out.push(...rows.filter((r) => !inWaves(r)));
  for (const group of groupBy(waved, (r) => JSON.stringify([r.sessionTenant, r.session]))) {
    const first = group[0]!;
    const p = first.policy as { powerOnWaveSize: number; powerOnWaveIntervalSeconds?: number };
    const interval = p.powerOnWaveIntervalSeconds ?? 60;
    const used = await recentPowerOns(ctx.db, first.sessionTenant, first.session, interval);
    const room = Math.max(0, p.powerOnWaveSize - used);
    out.push(...group.slice(0, room));
    if (group.length > room) wake.push(['power-on', Math.min(interval, 5)]);
  }
  return { rows: out, wake };
}
