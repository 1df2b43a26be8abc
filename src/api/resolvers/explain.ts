/**
 * Beyond BOS: the dry run (planSession), explain, explainSession and the per-node timeline. The plan
 * runs the engine's own planning code (engine/plan.ts) and explain the operators' own selections, so
 * neither can disagree with what the engine will do.
 */
import { existingComponents } from '../../db/components/read.ts';
import { readEventsPage, type LiveEvent } from '../../db/live.ts';
import type { EventRow } from '../../db/schema.ts';
import { canonicalXname, parseComponentId } from '../../domain/xname.ts';
import { tenantXnames, visibleIds } from '../../db/tenants.ts';
import { getOptions } from '../../db/options.ts';
import { planSession } from '../../engine/plan.ts';
import { describePlan } from '../../engine/plan-detail.ts';
import { explainComponent, explainSession } from '../explain.ts';
import { componentJobs } from '../../engine/queue/open-jobs.ts';
import { errorText } from '../../engine/outcome.ts';
import { badInput } from '../errors.ts';
import { enumValue } from '../enums.ts';
import { messages } from '../views.ts';
import { checkSessionInput } from '../session-checks.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';
import { unavailableError } from '../unavailable.ts';

function adapters(ctx: ApiContext) {
  if (!ctx.adapters) throw unavailableError('the outside services are not configured in this API process');
  return ctx.adapters;
}

const COUNT_KEYS = {
  power_cycle: 'powerCycle',
  power_on: 'powerOn',
  power_off: 'powerOff',
  configure_only: 'configureOnly',
  nothing: 'nothing',
  unknown: 'unknown',
} as const;

export const explainResolvers: Resolvers = {
  Query: {
    planSession: async (_p, { input }, ctx) => {
      await ctx.requireKnownTenant();
      const c = await checkSessionInput(ctx, input);
      const base = {
        operation: input.operation,
        templateName: input.templateName,
        errors: messages(c.errors),
        warnings: messages(c.warnings),
        counts: { managed: 0, skipped: 0, powerCycle: 0, powerOn: 0, powerOff: 0, configureOnly: 0, nothing: 0, unknown: 0 },
        bootSets: [],
        nodes: [],
        setupError: null as string | null,
      };
      if (c.errors.length || !c.session || !c.template) return { ...base, valid: false };
      const a = adapters(ctx);
      const options = await getOptions(ctx.db);
      let plan: Awaited<ReturnType<typeof planSession>>;
      try {
        plan = await planSession(
          { operation: c.session.operation, limit: c.session.limit, includeDisabled: c.session.includeDisabled, tenant: ctx.tenant },
          c.template,
          {
            adapters: a,
            options,
            tenantXnames: ctx.tenant ? await tenantXnames(ctx.db, ctx.tenant) : null,
            existingComponents: (ids) => existingComponents(ctx.db, ids),
          },
        );
      } catch (e) {
        // Exactly what session setup would fail the session with.
        return { ...base, valid: true, setupError: `${e instanceof Error ? e.constructor.name : 'Error'}: ${errorText(e)}` };
      }
      const detail = await describePlan(ctx.db, a, plan, c.session.operation);
      const counts = { ...base.counts, managed: plan.managed.size, skipped: plan.skipped.size };
      for (const n of detail.nodes) if (n.action !== 'skip') counts[COUNT_KEYS[n.action]]++;
      return {
        ...base,
        valid: true,
        setupError: plan.error,
        counts,
        warnings: messages([
          ...c.warnings,
          ...plan.warnings.map((m) => ({ field: '', message: m })),
          ...detail.warnings.map((m) => ({ field: '', message: m })),
        ]),
        bootSets: plan.bootSets.map((b) => ({ name: b.name, nodeCount: b.nodes.length, ...b.desired })),
        nodes: detail.nodes.map((n) => ({ id: n.id, bootSet: n.bootSet, action: n.action, skipReason: n.skipReason, detail: n.detail })),
      };
    },
    explain: async (_p, { componentId }, ctx) => {
      // A tenant sees only its own nodes, as with `component` (reference §2.1).
      const id = parseComponentId(componentId);
      if (ctx.tenant !== null && !('error' in id) && !(await visibleIds(ctx.db, ctx.tenant, [id.id])).has(id.id)) return null;
      const e = await explainComponent(ctx.db, adapters(ctx), componentId);
      if (!e) return null;
      return {
        componentId: e.id,
        summary: e.summary,
        waitingFor: e.waitingFor,
        nextOperator: e.nextOperator,
        next: e.next.next,
        nextAt: e.next.nextAt,
        advice: e.next.advice,
        suggestedAction: e.next.action,
        phase: enumValue('ComponentPhase', e.phase, 'phase'),
        status: enumValue('ComponentStatus', e.status, 'status'),
        enabled: e.enabled,
        session: e.session?.name ?? null,
        sessionPaused: !!e.session?.paused,
        sessionPauseReason: e.session?.pauseReason ?? null,
        powerState: !e.power ? null : e.power.state === 'unknown' ? `unknown (${e.power.cause}): ${e.power.error}` : e.power.state,
        cfsDesiredConfig: e.cfs?.desiredConfig ?? null,
        cfsStatus: e.cfs?.configurationStatus ?? null,
        decision: e.decision ? { ...e.decision, phase: enumValue('ComponentPhase', e.decision.phase, 'decision.phase') } : null,
        criteria: e.criteria,
        blockers: e.blockers,
        lastEvents: e.lastEvents.map(timelineView),
        jobs: await componentJobs(ctx.db, e.id),
      };
    },
    explainSession: async (_p, { name }, ctx) => {
      const e = await explainSession(ctx.db, ctx.tenantKey, name);
      if (!e) return null;
      return {
        name: e.name,
        state: enumValue('SessionState', e.status, 'state'),
        paused: e.paused,
        pauseReason: e.pauseReason,
        remaining: e.remaining,
        groups: e.groups,
      };
    },
    componentTimeline: async (_p, { componentId, session: s, first, after }, ctx) => {
      if (!componentId && !s) throw badInput([{ field: 'componentId', message: 'give a componentId or a session' }]);
      const limit = first ?? 100;
      if (limit < 1 || limit > 10_000) throw badInput([{ field: 'first', message: 'must be between 1 and 10000' }]);
      if (after != null && !/^\d{1,15}$/.test(after)) throw badInput([{ field: 'after', message: 'not a cursor returned by this API' }]);
      const id = componentId ? canonicalXname(componentId) : null;
      // The same settled log the componentEvents query and subscription read, so a page never shows a hole.
      const upTo = ctx.live ? (await ctx.live.ready(), ctx.live.mark) : Number.MAX_SAFE_INTEGER;
      const rows = await readEventsPage(
        ctx.db,
        { ids: id ? [id] : null, session: s ?? null, sessionTenant: ctx.tenantKey, tenant: ctx.tenant },
        after == null ? 0 : Number(after),
        upTo,
        limit,
      );
      return {
        events: rows.map(timelineView),
        nextCursor: rows.length === limit ? String(rows.at(-1)!.id) : null,
        jobs: id ? await componentJobs(ctx.db, id) : [],
      };
    },
  },
};

/** A LiveEvent (the log reader's) or a stored event row (explain's last events). */
function timelineView(x: LiveEvent | EventRow) {
  return {
    cursor: String(x.id),
    at: x.at,
    componentId: x.componentId,
    session: x.session,
    kind: x.kind,
    actor: x.actor,
    fromPhase: x.fromPhase,
    toPhase: x.toPhase,
    fromStatus: x.fromStatus,
    toStatus: x.toStatus,
    action: x.action,
    error: x.error,
    reason: x.reason,
  };
}
