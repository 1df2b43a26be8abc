/**
 * power-drift; a tick every 10 s while the option power_drift_rate is above 0.
 * Selects:
 * - nodes that are done (disabled, phase '', no override) and whose power bootorch left known: on
 *   after booting what it was given, off after a shutdown (db/components/power-drift.ts);
 * - a slice of them per tick, by a hash of the id and the clock, sized so that about
 *   power_drift_rate nodes are read per second: the whole fleet in (nodes / rate) seconds, whichever
 *   worker process runs the tick (no process keeps a place in the sweep).
 * Does: reads their power (PCS power-status, or the nodes' BMCs through the guard, in pages); a node
 * whose power is not what bootorch left gets a mark (expected, actual, since), a `drift` event and
 * the metric; a node read back as expected loses its mark; a node whose power cannot be read is left
 * as it is. Nothing is powered: drift is only seen, for an operator to act on.
 */
import { defineOperator, errorText } from '../engine/operator.ts';
import { done } from '../engine/outcome.ts';
import { chunks } from '../domain/lists.ts';
import {
  clearDrift,
  clearDriftOfBusyNodes,
  countDriftCandidates,
  countDrifted,
  driftCandidates,
  markDrift,
  type DriftCandidate,
} from '../db/components/power-drift.ts';
import { powerDriftFound, powerDriftNodes, powerDriftReads } from '../observability/metrics.ts';

/** Seconds between ticks: the slices are this many seconds of the rate. */
export const DRIFT_TICK_SECONDS = 10;

/** Which slice of how many this tick reads: time-sliced, so any process picks the same one. */
export function driftSlice(candidates: number, ratePerSecond: number, nowMs: number): { slice: number; slices: number } {
  const perTick = Math.max(1, Math.ceil(ratePerSecond * DRIFT_TICK_SECONDS));
  const slices = Math.max(1, Math.ceil(candidates / perTick));
  return { slice: Math.floor(nowMs / (DRIFT_TICK_SECONDS * 1000)) % slices, slices };
}

export const powerDrift = defineOperator<DriftCandidate>({
  name: 'power-drift',
  period: (o) => (o.power_drift_rate > 0 ? DRIFT_TICK_SECONDS : 0),
  async *select(ctx) {
    if (ctx.options.power_drift_rate <= 0) return;
    await clearDriftOfBusyNodes(ctx.db);
    const { slice, slices } = driftSlice(await countDriftCandidates(ctx.db), ctx.options.power_drift_rate, ctx.now().getTime());
    yield* chunks(await driftCandidates(ctx.db, slice, slices), ctx.options.max_component_batch_size);
    powerDriftNodes.set(await countDrifted(ctx.db));
  },
  // Nothing is written on a node whose power could not be read: the drift sweep is no reason to fail it.
  record: async () => {},
  async decidePage(ctx, page) {
    let power: Awaited<ReturnType<typeof ctx.adapters.power.powerStatus>>;
    try {
      power = await ctx.adapters.power.powerStatus(page.map((c) => c.id));
    } catch (e) {
      ctx.log.warn({ err: errorText(e), count: page.length }, 'power drift: power-status failed; these nodes are read again next sweep');
      powerDriftReads.inc({ outcome: 'unknown' }, page.length);
      return { outcomes: page.map((c) => [c, done]) };
    }
    const drifted: Array<{ c: DriftCandidate; actual: 'on' | 'off' }> = [];
    const same: DriftCandidate[] = [];
    for (const c of page) {
      const p = power.get(c.id);
      const actual = p?.state === 'on' || p?.state === 'off' ? p.state : undefined;
      powerDriftReads.inc({ outcome: actual === undefined ? 'unknown' : actual === c.expected ? 'same' : 'drift' });
      if (actual === undefined) continue;
      if (actual === c.expected) same.push(c);
      else drifted.push({ c, actual });
    }
    return {
      outcomes: page.map((c) => [c, done]),
      async write(tx) {
        const marked = await markDrift(tx, drifted, ctx.actor, ctx.now());
        for (const c of marked) powerDriftFound.inc({ expected: c.expected });
        if (marked.length) ctx.log.warn({ nodes: marked.length, examples: marked.slice(0, 5).map((c) => c.id) }, 'power drift found');
        await clearDrift(tx, same, ctx.actor);
      },
    };
  },
});
