/**
 * session-setup (BOS operators/session_setup.py).
 * Selects:
 * - sessions whose status is pending (every tenant), one at a time.
 * Does, per session: plans it (engine/plan.ts: boot sets expanded, limit, locks, tenant, arch,
 * inventory-enabled; image resolved), writes desired or staged state for every managed node in one
 * transaction with the session marked running, and kicks status. A session that cannot be set up
 * completes with the error, as BOS's does; an outside service that is down (a transient error) is
 * retried for SETUP_RETRY_SECONDS before the session is failed. A session that needs a second admin's
 * approval (domain/approval.ts) is marked so and left pending, unselected, until it is approved.
 */
import { defineOperator, errorText, oneByOne, type EngineContext, type Step } from '../engine/operator.ts';
import { again, done, failed, isTransient } from '../engine/outcome.ts';
import { recordSessionOutcomes } from '../engine/session-outcomes.ts';
import { planSession, type SessionPlan } from '../engine/plan.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { applySetup } from '../db/components/setup.ts';
import { setDeploys } from '../db/deploys.ts';
import { existingComponents } from '../db/components/read.ts';
import { markRunning, pendingSessions } from '../db/sessions/lifecycle.ts';
import { getTemplate } from '../db/templates.ts';
import { tenantXnames } from '../db/tenants.ts';
import type { SessionRow } from '../db/schema.ts';
import type { SessionOperation } from '../domain/sessions.ts';
import { gatesAdmission } from '../domain/rollout-policy.ts';
import { inSpanOf } from '../observability/tracing.ts';
import { approvalReason } from '../domain/approval.ts';
import { markAwaitingApproval } from '../db/sessions/approval.ts';

const SETUP_RETRY_SECONDS = 300;

export const sessionSetup = defineOperator<SessionRow>({
  name: 'session-setup',
  select: (ctx) => oneByOne(pendingSessions(ctx.db)),
  record: recordSessionOutcomes,
  trace: ([s]) => s?.traceContext,
  async decidePage(ctx, [s]) {
    try {
      // The setup joins the trace of the request that created the session.
      return await inSpanOf([s!.traceContext], 'session setup', { 'bootorch.session': s!.name }, () => setUp(ctx, s!));
    } catch (e) {
      const age = (ctx.now().getTime() - s!.startTime.getTime()) / 1000;
      if (isTransient(e) && age < SETUP_RETRY_SECONDS) {
        return { outcomes: [[s!, again({ error: errorText(e), reason: 'service_unavailable' })]], wake: [['session-setup', 2]] };
      }
      return {
        outcomes: [
          [s!, failed({ error: `${e instanceof Error ? e.constructor.name : 'Error'}: ${errorText(e)}`, reason: 'service_unavailable' })],
        ],
      };
    }
  },
});

/** The plan for a stored session (shared with the API's planSession). */
export async function planStoredSession(ctx: Pick<EngineContext, 'db' | 'adapters' | 'options'>, s: SessionRow) {
  const template = await getTemplate(ctx.db, s.tenantKey, s.templateName);
  if (!template) return { template: null, plan: null };
  const plan = await planSession(
    { operation: s.operation as SessionOperation, limit: s.limit, includeDisabled: s.includeDisabled, tenant: s.tenant },
    template,
    {
      adapters: ctx.adapters,
      options: ctx.options,
      tenantXnames: s.tenant ? await tenantXnames(ctx.db, s.tenant) : null,
      existingComponents: (ids) => existingComponents(ctx.db, ids),
    },
  );
  return { template, plan };
}

async function setUp(ctx: EngineContext, s: SessionRow): Promise<Step<SessionRow>> {
  const { template, plan } = await planStoredSession(ctx, s);
  const fail = (error: string): Step<SessionRow> => ({ outcomes: [[s, failed({ error, reason: 'service_unavailable' })]] });
  if (!template || !plan) return fail(`Session template ${s.templateName} does not exist`);
  if (plan.error) return fail(plan.error);
  // The policy as merged when the session was created (the template's, overridden by the request):
  // a template edited since changes the boot sets this setup reads, never the session's policy.
  const rollout = s.rollout ?? {};
  const hasPolicy = Object.values(rollout).some((v) => v !== null && v !== undefined && v !== '');
  const ids = [...plan.managed.keys()].sort();
  // Safer large operations: a session over many nodes, or every node, waits for a second admin.
  const approval = s.approvedBy ? '' : approvalReason(s.limit, ids.length, ctx.options);
  if (approval) {
    return {
      outcomes: [[s, done]],
      async write(tx) {
        await markAwaitingApproval(tx, s, approval);
        ctx.log.info({ session: s.name, nodes: ids.length }, 'session waits for approval');
        return [];
      },
    };
  }
  const queue = !s.stage && gatesAdmission(rollout);
  return {
    outcomes: [[s, done]],
    async write(tx) {
      await applySetup(
        tx,
        s,
        rows(plan, ids, queue),
        {
          retryPolicy: typeof rollout.retryPolicy === 'number' ? rollout.retryPolicy : null,
          // The wait status rule 1p applies to these nodes: the session's policy, else the option.
          maxPowerOnWaitTime: effectiveWaits({ policy: rollout }, ctx.options).maxPowerOnWaitTime,
        },
        ctx.actor,
      );
      // A rescue and an unrescue leave the nodes' disk deploys as they are.
      if (!s.stage && s.operation !== 'rescue' && s.operation !== 'unrescue')
        await setDeploys(
          tx,
          s,
          ids.map((id) => ({ id, deploy: plan.managed.get(id)!.deploy })),
        );
      await markRunning(tx, s, ids, hasPolicy ? rollout : null);
      ctx.log.info({ session: s.name, nodes: ids.length, skipped: plan.skipped.size, warnings: plan.warnings.length }, 'session set up');
      return s.stage ? ['session-completion'] : ['status'];
    },
  };
}

function rows(plan: SessionPlan, ids: string[], queue: boolean) {
  return ids.map((id, i) => ({ id, desired: plan.managed.get(id)!.desired, queuedSeq: queue ? i + 1 : null }));
}
