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
 * Passes proportional to what changed. Three kinds of pass:
 * - full: every selected component. The first of a process, one after a pass cut short or whose PCS or
 *   CFS call failed, and then every polling_frequency: the level-triggered safety net.
 * - transit: every transit_polling_frequency while any node waits on the outside world (PCS to finish a
 *   power transition, CFS to configure it, a deploy agent), since PCS and CFS tell no one: those nodes
 *   (`outside`, as this process last decided them) and whatever changed. A node powered on and waiting
 *   for its own report (rule 5) is not re-polled: its report writes its row, and its boot wait is a
 *   delayed decision (operators/escalation.ts afterPowerOn).
 * - changed (a kick: reports, actions, edits): only the components written since the previous complete
 *   pass began, by any writer (their row's transaction id, db/components/select.ts changedSince), or
 *   acted on by an action job since (acted_batches: acting writes no component row): a trickle of
 *   reports costs the rows it wrote, not every enabled node. A pass that completes forgets the acted
 *   batches it saw.
 * The passes' state (StatusPasses) is one object per engine, made with the operator (createStatus,
 * called by operators/index.ts createOperators for each engine the composition root starts).
 * Each engine keeps its own `outside` set, from the decisions it made: a node another process
 * decided is re-polled by that process's transit passes, or by the next full pass (polling_frequency);
 * a node counted as waiting on its own report that moves without a write (switched off by hand) is
 * found by the full pass too, or by its boot wait.
 */
import { defineOperator, errorText, type OperatorDef, type OperatorSpec } from '../engine/operator.ts';
import { again, done, type Outcome } from '../engine/outcome.ts';
import type { OperatorName } from '../engine/scheduler.ts';
import { recordComponentOutcomes } from '../engine/component-outcomes.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { forgetActed, passSnapshot, selectComponents, selectPages, type EngineComponent } from '../db/components/select.ts';
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

/**
 * Rules whose node waits on nothing the status pass can see change: rule 5, powered on and waiting for
 * its own report (a row write), or for its boot wait (a delayed decision). Every other rule that keeps a
 * node in transit depends on PCS, CFS or the clock, and is re-polled by the transit passes.
 */
const QUIET_RULES = new Set(['5']);

/** The passes of one engine's status operator, as it ran them. */
export class StatusPasses {
  /** When the last full pass began (database clock, ms). */
  fullAt = Number.NEGATIVE_INFINITY;
  /** When the last full or transit pass began. */
  transitAt = Number.NEGATIVE_INFINITY;
  /** Nodes in transit that wait on the outside world (PCS, CFS, a deploy agent, the clock), as this engine last decided them. */
  readonly outside = new Set<string>();
  /** Where the last complete pass began (passSnapshot); undefined: the next pass is full. */
  since?: string;
  /** A page's outside calls failed in this pass: the next one is full. */
  failed = false;
}
type StatusPass = 'full' | 'transit' | 'changed';

function statusSpec(p: StatusPasses): OperatorSpec<EngineComponent> {
  return {
    name: 'status',
    async *select(ctx) {
      await admitQueued(ctx);
      const now = ctx.now().getTime();
      const transitPeriod = ctx.options.transit_polling_frequency * 1000;
      const pass: StatusPass =
        p.since === undefined || now - p.fullAt >= ctx.options.polling_frequency * 1000
          ? 'full'
          : p.outside.size > 0 && now - p.transitAt >= transitPeriod
            ? 'transit'
            : 'changed';
      const since = p.since;
      const started = await passSnapshot(ctx.db);
      if (pass === 'full') p.fullAt = now;
      if (pass !== 'changed') p.transitAt = now;
      const outside = pass === 'transit' ? [...p.outside] : undefined;
      if (pass === 'full') p.outside.clear(); // refilled by this pass's decisions
      const seen = new Set<string>();
      p.since = undefined; // until this pass completes
      p.failed = false;
      statusPasses.inc({ pass });
      for await (const page of selectPages(
        ctx.db,
        pass === 'full' ? STATUS_SELECTION : { ...STATUS_SELECTION, changedSince: since, orIds: outside },
        ctx.options.max_component_batch_size,
      )) {
        statusRowsRead.inc({ pass }, page.length);
        if (outside) for (const c of page) seen.add(c.id);
        yield page;
      }
      // Nodes no longer selected (disabled, queued for a rollout) no longer wait here.
      for (const id of outside ?? []) if (!seen.has(id)) p.outside.delete(id);
      if (!p.failed) {
        p.since = started;
        await forgetActed(ctx.db, started);
      }
      // The transit re-poll is due whether or not anything changed: a changed-only pass that read no
      // page scheduled no wake of its own, so it asks for the next transit pass here.
      if (pass === 'changed' && p.outside.size > 0) {
        await ctx.scheduler.wakeAt(ctx.db, 'status', new Date(p.transitAt + transitPeriod));
      }
    },
    record: recordComponentOutcomes,
    async decidePage(ctx, page) {
      const transit: Array<['status', number]> = [['status', ctx.options.transit_polling_frequency]];
      const ids = page.map((c) => c.id);
      let power: Awaited<ReturnType<typeof ctx.adapters.power.powerStatus>>;
      let cfs: Awaited<ReturnType<typeof ctx.adapters.config.getComponents>>;
      try {
        [power, cfs] = await Promise.all([ctx.adapters.power.powerStatus(ids), ctx.adapters.config.getComponents(ids)]);
      } catch (e) {
        p.failed = true;
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
      // A BMC still being asked (its read goes on, bounded by the per-call timeout) gives no conclusion:
      // nothing is decided for its node until it answers or fails; it is re-read with the nodes in transit.
      const pending = (id: string) => {
        const p = power.get(id);
        return p?.state === 'unknown' && p.pending === true;
      };
      const asking = page.filter((row) => pending(row.id));
      const decisions = page
        .filter((row) => !pending(row.id))
        .map((row) => ({
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
      // A node held because its power is unknown (U1) waits on its BMC: re-read like one in transit,
      // so it is released, or failed at power_unknown_timeout, on time.
      const inTransit = (d: (typeof decisions)[number]['decision']) => !d.disable && (d.phase !== '' || d.rule === 'U1');
      const { outside } = p;
      for (const { row, decision } of decisions) {
        if (inTransit(decision) && !QUIET_RULES.has(decision.rule)) outside.add(row.id);
        else outside.delete(row.id);
      }
      for (const row of asking) outside.add(row.id);
      return {
        outcomes: [
          ...decisions.map(({ row, decision }): [EngineComponent, Outcome] => [row, inTransit(decision) ? again() : done]),
          ...asking.map((row): [EngineComponent, Outcome] => [row, again()]),
        ],
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
        // The transit re-poll, for nodes that wait on the outside world. A node waiting on its own report
        // is woken by it, or by its boot wait: a pass for it alone would only re-read this pass's writes.
        wake: asking.length > 0 || decisions.some(({ decision }) => inTransit(decision) && !QUIET_RULES.has(decision.rule)) ? transit : [],
      };
    },
  };
}

/**
 * The status operator, with the state of its passes (a new StatusPasses: one per engine). Its ticks
 * are passes over every enabled node; its jobs are delayed decisions (engine/action-jobs.ts): when the
 * power-on or boot wait of nodes powered on together is over, the same decision for just those nodes
 * (a node already on, or booted, is simply left as it is).
 */
export function createStatus(passes: StatusPasses = new StatusPasses()): OperatorDef {
  const spec = statusSpec(passes);
  return defineOperator<EngineComponent>(spec, {
    jobs: {
      operator: 'status',
      action: 'status',
      holds: () => false,
      perform: async () => new Map(),
      redecide: async (ctx, ids) => spec.decidePage(ctx, await selectComponents(ctx.db, { ...STATUS_SELECTION, ids })),
    },
  });
}
