/**
 * status (BOS operators/status.py): the sole writer of `phase`.
 * Selects:
 * - enabled components, except those waiting in a rollout queue (status `queued`).
 * Does, per chunk: one PCS power-status call and one CFS components read, the decision table
 * (domain/status-decision.ts) per component, one guarded bulk write, and kicks the operators
 * whose work appeared. While anything is in transit it re-polls every transit_polling_frequency,
 * since PCS and CFS do not tell anyone when a node finishes a transition.
 */
import type { OperatorDef, EngineContext } from '../engine/operator.ts';
import { errorText } from '../engine/operator.ts';
import type { OperatorName } from '../engine/kick.ts';
import { recordProblems, selectPages } from '../db/engine/components.ts';
import { applyStatusChanges } from '../db/engine/status.ts';
import { decide } from '../domain/status-decision.ts';
import { transaction } from '../db/tx.ts';
import { admitQueued } from './rollout.ts';
import { effectiveWaits } from '../engine/selection.ts';

/** Enabled components, except those waiting in a rollout queue. */
export const STATUS_SELECTION = { enabled: true, excludeStatuses: ['queued'] };

const KICK_FOR_STATUS: Record<string, OperatorName> = {
  power_on_pending: 'power-on',
  power_off_pending: 'power-off-graceful',
  configuring: 'configuration',
};

export const status: OperatorDef = {
  name: 'status',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    await admitQueued(ctx);
    let inTransit = false;
    for await (const chunk of selectPages(ctx.pool, STATUS_SELECTION, ctx.options.max_component_batch_size)) {
      const ids = chunk.map((c) => c.id);
      let power, cfs;
      try {
        [power, cfs] = await Promise.all([ctx.adapters.power.powerStatus(ids), ctx.adapters.config.getComponents(ids)]);
      } catch (e) {
        // Errors as data: the chunk keeps its phase, carries the error, and is looked at again next tick.
        // Only components whose error text changes get a write and an event (the same outage, tick after tick, is one).
        const error = errorText(e);
        const fresh = chunk.filter((c) => c.error !== error);
        await transaction(ctx.pool, (tx) => recordProblems(tx.client, fresh,
          fresh.map((c) => ({ id: c.id, error, reason: 'service_unavailable' as const })), ctx.actor));
        inTransit = true;
        continue;
      }
      const cfsById = new Map(cfs.map((c) => [c.id, c]));
      const now = ctx.now();
      const decisions = chunk.map((row) => ({
        row,
        decision: decide(row, power.get(row.id), cfsById.get(row.id), effectiveWaits(row, ctx.options), now),
      }));
      await transaction(ctx.pool, async (tx) => {
        const applied = await applyStatusChanges(tx.client, decisions, ctx.actor);
        const kicks = new Set<OperatorName>();
        for (const a of applied) {
          const k = KICK_FOR_STATUS[a.newStatus];
          if (k) kicks.add(k);
          if (a.decision.disable) kicks.add('session-completion');
        }
        if (kicks.size) await ctx.kicker.kick(tx, [...kicks]);
      });
      if (decisions.some(({ decision }) => !decision.disable && decision.phase !== '')) inTransit = true;
    }
    if (inTransit) await ctx.wake('status', ctx.options.transit_polling_frequency);
  },
};

export type { EngineContext };
