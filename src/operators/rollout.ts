/**
 * The rollout gate, run at the start of every status tick (so admitted nodes are decided at once).
 * Per running session with a policy: a canary failure or a spent failure budget pauses the session;
 * otherwise queued nodes are admitted FIFO while fewer than maxInFlight are in flight, and only the
 * canary's nodes until the canary has succeeded (or a resume accepted it).
 */
import type { EngineContext } from '../engine/operator.ts';
import { admit, gateStates } from '../db/sessions/rollout.ts';
import { pauseSession } from '../db/sessions/control.ts';
import { resolveCountOrPercent } from '../domain/rollout-policy.ts';
import { transaction } from '../db/tx.ts';
import { traceLogger } from '../observability/logging.ts';

const amount = (v: string | undefined, total: number) => (v ? resolveCountOrPercent(v, total) : null);

export async function admitQueued(ctx: EngineContext): Promise<void> {
  for (const g of await gateStates(ctx.db)) {
    const log = traceLogger(ctx.log, g.traceContext);
    const p = g.rollout ?? {};
    const budget = amount(p.failureBudget, g.managed);
    const canary = g.canaryAccepted ? 0 : Math.min(p.canary ?? 0, g.managed);
    const failedSinceResume = g.failed - g.failedAtResume;
    let pauseReason: string | null = null;
    if (canary > 0 && g.canaryFailed > 0) {
      pauseReason = `canary failed: ${g.canaryFailed} of the first ${canary} nodes failed`;
    } else if (budget !== null && failedSinceResume > budget) {
      pauseReason = `failure budget exceeded: ${failedSinceResume} failed, budget ${p.failureBudget}`;
    }
    if (pauseReason && !g.paused) {
      await pauseSession(ctx.db, g.tenantKey, g.name, pauseReason);
      log.warn({ session: g.name, reason: pauseReason }, 'session paused');
      continue;
    }
    if (g.paused || g.queued === 0) continue;
    const cap = amount(p.maxInFlight, g.managed) ?? Infinity;
    let room = Math.max(0, cap - g.inFlight);
    const started = g.managed - g.queued;
    if (canary > 0 && g.canaryDone < canary) room = Math.min(room, Math.max(0, canary - started));
    if (room === 0) continue;
    await transaction(ctx.db, async (tx) => {
      const ids = await admit(tx, g.tenantKey, g.name, Math.min(room, g.queued), ctx.actor);
      if (ids.length) log.debug({ session: g.name, admitted: ids.length }, 'admitted');
    });
  }
}
