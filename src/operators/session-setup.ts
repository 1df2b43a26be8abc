/**
 * session-setup (BOS operators/session_setup.py).
 * Selects:
 * - sessions whose status is pending (every tenant).
 * Does, per session: plans it (engine/plan.ts: boot sets expanded, limit, locks, tenant, arch,
 * inventory-enabled; image resolved), writes desired or staged state for every managed node in one
 * transaction with the session marked running, and kicks status. A session that cannot be set up
 * completes with the error, as BOS's does; an outside service that is down is retried for
 * SETUP_RETRY_SECONDS before the session is failed.
 */
import type { OperatorDef, EngineContext } from '../engine/operator.ts';
import { errorText } from '../engine/operator.ts';
import { ServiceError } from '../adapters/errors.ts';
import { planSession, type SessionPlan } from '../engine/plan.ts';
import {
  applySetup, existingComponents, loadTemplate, markComplete, markRunning, pendingSessions, tenantXnames, type EngineSession,
} from '../db/engine/sessions.ts';
import { gatesAdmission } from '../domain/rollout-policy.ts';
import { transaction } from '../db/tx.ts';
import { snapshotSession } from './session-completion.ts';

const SETUP_RETRY_SECONDS = 300;

export const sessionSetup: OperatorDef = {
  name: 'session-setup',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    for (const s of await pendingSessions(ctx.pool)) {
      try {
        await setUp(ctx, s);
      } catch (e) {
        const transient = e instanceof ServiceError && e.transient;
        const age = (ctx.now().getTime() - s.startTime.getTime()) / 1000;
        if (transient && age < SETUP_RETRY_SECONDS) {
          ctx.log.warn({ session: s.name, err: errorText(e) }, 'session setup will be retried');
          await ctx.wake('session-setup', 2);
          continue;
        }
        await fail(ctx, s, `${e instanceof Error ? e.constructor.name : 'Error'}: ${errorText(e)}`);
      }
    }
  },
};

/** The plan for a stored session (shared with the API's planSession). */
export async function planStoredSession(ctx: Pick<EngineContext, 'pool' | 'adapters' | 'options'>, s: EngineSession) {
  const template = await loadTemplate(ctx.pool, s.tenantKey, s.templateName);
  if (!template) return { template: null, plan: null };
  const plan = await planSession(
    { operation: s.operation, limit: s.limit, includeDisabled: s.includeDisabled, tenant: s.tenant },
    template,
    {
      adapters: ctx.adapters, options: ctx.options,
      tenantXnames: s.tenant ? await tenantXnames(ctx.pool, s.tenant) : null,
      existingComponents: (ids) => existingComponents(ctx.pool, ids),
    },
  );
  return { template, plan };
}

async function setUp(ctx: EngineContext, s: EngineSession): Promise<void> {
  const { template, plan } = await planStoredSession(ctx, s);
  if (!template || !plan) return fail(ctx, s, `Session template ${s.templateName} does not exist`);
  if (plan.error) return fail(ctx, s, plan.error);
  const rollout = { ...(template.rollout ?? {}), ...(s.rollout ?? {}) };
  const hasPolicy = Object.values(rollout).some((v) => v !== null && v !== undefined && v !== '');
  const ids = [...plan.managed.keys()].sort();
  const queue = !s.stage && gatesAdmission(rollout);
  await transaction(ctx.pool, async (tx) => {
    await applySetup(tx.client, s, rows(plan, ids, queue), {
      retryPolicy: typeof rollout.retryPolicy === 'number' ? rollout.retryPolicy : null,
    }, ctx.actor);
    await markRunning(tx.client, s, ids, hasPolicy ? rollout : null);
    await ctx.kicker.kick(tx, s.stage ? ['session-completion'] : ['status']);
  });
  ctx.log.info({ session: s.name, nodes: ids.length, skipped: plan.skipped.size, warnings: plan.warnings.length }, 'session set up');
}

function rows(plan: SessionPlan, ids: string[], queue: boolean) {
  return ids.map((id, i) => ({ id, desired: plan.managed.get(id)!.desired, queuedSeq: queue ? i + 1 : null }));
}

async function fail(ctx: EngineContext, s: EngineSession, error: string): Promise<void> {
  await transaction(ctx.pool, async (tx) => {
    if (await markComplete(tx.client, s.tenantKey, s.name, error)) await snapshotSession(tx, s.tenantKey, s.name);
  });
  ctx.log.warn({ session: s.name, error }, 'session setup failed');
}
