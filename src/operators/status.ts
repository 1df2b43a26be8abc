/**
 * status (BOS operators/status.py): the sole writer of `phase`.
 * Selects:
 * - enabled components, except those waiting in a rollout queue (status `queued`).
 * Does, per page: one PCS power-status call and one CFS components read, the decision table
 * (domain/status-decision.ts) per component, one guarded bulk write, and kicks the operators
 * whose work appeared. While anything is in transit it re-polls every transit_polling_frequency,
 * since PCS and CFS do not tell anyone when a node finishes a transition. Before the pages it runs the
 * rollout gate (operators/rollout.ts), so admitted nodes are decided in the same tick.
 */
import { defineOperator, errorText } from '../engine/operator.ts';
import { again, done, type Outcome } from '../engine/outcome.ts';
import type { OperatorName } from '../engine/scheduler.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { selectPages, type EngineComponent } from '../db/components/select.ts';
import { applyStatusChanges } from '../db/components/status.ts';
import { decideWithDeploy } from '../domain/deploy-decision.ts';
import { deploysOf } from '../db/deploys.ts';
import { admitQueued } from './rollout.ts';

/** Enabled components, except those waiting in a rollout queue. */
export const STATUS_SELECTION = { enabled: true, excludeStatuses: ['queued'] };

const KICK_FOR_STATUS: Record<string, OperatorName> = {
  power_on_pending: 'power-on',
  power_off_pending: 'power-off-graceful',
  configuring: 'configuration',
};

export const status = defineOperator<EngineComponent>({
  name: 'status',
  async *select(ctx) {
    await admitQueued(ctx);
    yield* selectPages(ctx.db, STATUS_SELECTION, ctx.options.max_component_batch_size);
  },
  record: recordComponentOutcomes,
  async act(ctx, page) {
    const transit: Array<['status', number]> = [['status', ctx.options.transit_polling_frequency]];
    const ids = page.map((c) => c.id);
    let power: Awaited<ReturnType<typeof ctx.adapters.power.powerStatus>>;
    let cfs: Awaited<ReturnType<typeof ctx.adapters.config.getComponents>>;
    try {
      [power, cfs] = await Promise.all([ctx.adapters.power.powerStatus(ids), ctx.adapters.config.getComponents(ids)]);
    } catch (e) {
      // Errors as data: the page keeps its phase, carries the error, and is looked at again soon.
      // Only components whose error text changes get a write and an event (the same outage, tick after tick, is one).
      const error = errorText(e);
      return {
        outcomes: page.map((c): [EngineComponent, Outcome] => [
          c,
          c.error === error ? again() : again({ error, reason: 'service_unavailable' }),
        ]),
        wake: transit,
      };
    }
    const cfsById = new Map(cfs.map((c) => [c.id, c]));
    // Disk deploys in flight (rows D1-D7 before the diskless table), read after the slow calls.
    const deploys = await deploysOf(ctx.db, ids);
    const now = ctx.now();
    const decisions = page.map((row) => ({
      row,
      decision: decideWithDeploy(
        row,
        deploys.get(row.id),
        power.get(row.id),
        cfsById.get(row.id),
        { ...effectiveWaits(row, ctx.options), deployHeartbeatTimeout: ctx.options.deploy_heartbeat_timeout },
        now,
      ),
    }));
    const inTransit = decisions.some(({ decision }) => !decision.disable && decision.phase !== '');
    return {
      outcomes: decisions.map(({ row, decision }): [EngineComponent, Outcome] => [
        row,
        decision.disable || decision.phase === '' ? done : again(),
      ]),
      async write(tx) {
        const kicks = new Set<OperatorName>();
        for (const a of await applyStatusChanges(tx, decisions, ctx.actor)) {
          const k = KICK_FOR_STATUS[a.newStatus];
          if (k) kicks.add(k);
          if (a.decision.phase === 'switching_to_disk') kicks.add('deploy-to-disk');
          if (a.decision.disable) kicks.add('session-completion');
        }
        return [...kicks];
      },
      wake: inTransit ? transit : [],
    };
  },
});
