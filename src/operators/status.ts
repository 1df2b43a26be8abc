/**
 * status (BOS operators/status.py): the sole writer of `phase`.
 * Selects:
 * - enabled components, except those waiting in a rollout queue (status `queued`).
 * Does, per page: one PCS power-status call and one CFS components read, the decision table
 * (domain/status-decision.ts) per component, one guarded bulk write, and kicks the operators
 * whose work appeared. While anything is in transit it re-polls every transit_polling_frequency,
 * since PCS and CFS do not tell anyone when a node finishes a transition. Before the pages it runs the
 * rollout gate (operators/rollout.ts), so admitted nodes are decided in the same tick.
 *
 * Passes proportional to what changed: a pass reads every selected component when one is due (the
 * first of a process, then every transit_polling_frequency while anything is in transit, else every
 * polling_frequency: the level-triggered safety net, and the transit re-poll). Off by default
 * (BOOTORCH_STATUS_CHANGED_PASSES): on the real path it read fewer rows but did not measure faster. Between those, a pass
 * (a kick: reports, actions, edits) reads only the components written since the previous complete
 * pass began, by any writer (their row's transaction id, db/components/select.ts changedSince): a
 * trickle of reports costs the rows it wrote, not every enabled node. A pass cut short, or one whose
 * PCS or CFS call failed, leaves the next one full.
 */
import { defineOperator, errorText, type OperatorSpec } from '../engine/operator.ts';
import { again, done, type Outcome } from '../engine/outcome.ts';
import type { OperatorName } from '../engine/scheduler.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { passSnapshot, selectComponents, selectPages, type EngineComponent } from '../db/components/select.ts';
import type { Db } from '../db/client.ts';
import { statusPasses, statusRowsRead } from '../observability/metrics.ts';
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

/** Kicked passes read only what changed (BOOTORCH_STATUS_CHANGED_PASSES; false, the default: every pass reads everything). */
export const statusPassOptions = { changedOnly: false };

/** A database's passes, as this process ran them. */
interface Passes {
  /** When the last full pass began (database clock, ms). */
  fullAt: number;
  /** Where the last complete pass began (passSnapshot); undefined: the next pass is full. */
  since?: string;
  /** Something was in transit at the last full pass or since. */
  transit: boolean;
  /** A page's outside calls failed in this pass: the next one is full. */
  failed: boolean;
}
const passesOf = new WeakMap<Db, Passes>();
function passes(db: Db): Passes {
  let p = passesOf.get(db);
  if (!p) passesOf.set(db, (p = { fullAt: -Infinity, transit: true, failed: false }));
  return p;
}

const spec: OperatorSpec<EngineComponent> = {
  name: 'status',
  async *select(ctx) {
    await admitQueued(ctx);
    const p = passes(ctx.db);
    const now = ctx.now().getTime();
    const period = (p.transit ? ctx.options.transit_polling_frequency : ctx.options.polling_frequency) * 1000;
    const full = !statusPassOptions.changedOnly || p.since === undefined || now - p.fullAt >= period;
    const since = p.since;
    const started = statusPassOptions.changedOnly ? await passSnapshot(ctx.db) : undefined;
    if (full) {
      p.fullAt = now;
      p.transit = false;
    }
    p.since = undefined; // until this pass completes
    p.failed = false;
    const pass = full ? 'full' : 'changed';
    statusPasses.inc({ pass });
    for await (const page of selectPages(
      ctx.db,
      full ? STATUS_SELECTION : { ...STATUS_SELECTION, changedSince: since },
      ctx.options.max_component_batch_size,
    )) {
      statusRowsRead.inc({ pass }, page.length);
      yield page;
    }
    if (!p.failed) p.since = started;
    // The transit re-poll is due whether or not anything changed: a changed-only pass that read no
    // page scheduled no wake of its own, so it asks for the next full pass here.
    if (!full && p.transit) {
      await ctx.scheduler.wakeAt(ctx.db, 'status', new Date(p.fullAt + ctx.options.transit_polling_frequency * 1000));
    }
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
      passes(ctx.db).failed = true;
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
    if (inTransit) passes(ctx.db).transit = true;
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
};

/**
 * The status operator's ticks are passes over every enabled node; its jobs are delayed decisions
 * (engine/action-jobs.ts): when the power-on or boot wait of nodes powered on together is over, the
 * same decision for just those nodes (a node already on, or booted, is simply left as it is).
 */
export const status = defineOperator<EngineComponent>(spec, {
  jobs: {
    operator: 'status',
    action: 'status',
    holds: () => false,
    act: async () => new Map(),
    decide: async (ctx, ids) => spec.act(ctx, await selectComponents(ctx.db, { ...STATUS_SELECTION, ids })),
  },
});
