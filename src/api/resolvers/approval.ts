/** approveSession and the approval shown on a session and its explanation (domain/approval.ts). */
import { GraphQLError } from 'graphql';
import { approve } from '../../db/sessions/approval.ts';
import { getSession } from '../../db/sessions/rows.ts';
import { transaction } from '../../db/tx.ts';
import { approvalRefusal } from '../../domain/approval.ts';
import type { SessionRow } from '../../db/schema.ts';
import { conflict, notFound } from '../errors.ts';
import { sessionView } from '../views.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';

function approvalOf(s: SessionRow | null) {
  if (!s?.approvalNeeded) return null;
  return { reason: s.approvalNeeded, waiting: !s.approvedBy, approvedBy: s.approvedBy, approvedAt: s.approvedAt };
}

const byName = (ctx: ApiContext, tenantKey: string, name: string) => getSession(ctx.db, tenantKey, name);

export const approvalResolvers: Resolvers = {
  Mutation: {
    approveSession: async (_p, { name }, ctx) => {
      const s = await byName(ctx, ctx.tenantKey, name);
      if (!s) throw notFound('session', name);
      const refusal = approvalRefusal(s, ctx.actor);
      if (refusal === 'own_session')
        throw new GraphQLError(`forbidden: ${ctx.actor} created session ${name}; another admin must approve it`, {
          extensions: { code: 'FORBIDDEN', http: { status: 403 } },
        });
      if (refusal === 'already_approved') throw conflict(`session ${name} was approved by ${s.approvedBy}`, 'name');
      if (refusal) throw conflict(`session ${name} does not wait for approval`, 'name');
      await transaction(ctx.db, async (tx) => {
        if (!(await approve(tx, s, ctx.actor))) throw conflict(`session ${name} no longer waits for approval`, 'name');
        await ctx.scheduler.kick(tx, ['session-setup']);
      });
      ctx.logger?.info({ session: name, approvedBy: ctx.actor, createdBy: s.createdBy }, 'session approved');
      return sessionView((await byName(ctx, ctx.tenantKey, name))!);
    },
  },
  Session: {
    approval: async (p, _a, ctx) => approvalOf(await byName(ctx, (p as { tenantKey: string }).tenantKey, p.name)),
  },
  SessionExplanation: {
    approval: async (p, _a, ctx) => approvalOf(await byName(ctx, ctx.tenantKey, p.name)),
  },
};
