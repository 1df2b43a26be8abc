/**
 * Power-on waves (Beyond BOS): at most `powerOnWaveSize` power-on calls per
 * `powerOnWaveIntervalSeconds` (default 60) per session, so a full-machine boot does not stampede the
 * boot infrastructure (TFTP/HTTP, image servers). Nodes held back stay power_on_pending and are taken
 * by a later tick; the operator wakes itself when the window has room again.
 */
import type { EngineContext } from '../engine/operator.ts';
import type { EngineComponent } from '../db/engine/components.ts';
import { recentPowerOns } from '../db/engine/rollout.ts';

export async function powerOnWaves(ctx: EngineContext, rows: EngineComponent[]): Promise<EngineComponent[]> {
  const out: EngineComponent[] = [];
  const bySession = new Map<string, EngineComponent[]>();
  for (const r of rows) {
    const size = (r.policy as { powerOnWaveSize?: number } | null)?.powerOnWaveSize;
    if (!size) { out.push(r); continue; }
    const k = JSON.stringify([r.sessionTenant, r.session]);
    bySession.set(k, [...(bySession.get(k) ?? []), r]);
  }
  for (const [k, group] of bySession) {
    const [tenantKey, session] = JSON.parse(k) as [string, string];
    const p = group[0]!.policy as { powerOnWaveSize: number; powerOnWaveIntervalSeconds?: number };
    const interval = p.powerOnWaveIntervalSeconds ?? 60;
    const used = await recentPowerOns(ctx.pool, tenantKey, session, interval);
    const room = Math.max(0, p.powerOnWaveSize - used);
    out.push(...group.slice(0, room));
    if (group.length > room) await ctx.wake('power-on', Math.min(interval, 5));
  }
  return out;
}
