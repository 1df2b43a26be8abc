/**
 * Sessions: create (validated, stored pending, session-setup kicked in the same transaction), list,
 * delete, status, and people's controls over a running one (pause, resume, abort).
 */
import { transaction } from '../../db/tx.ts';
import { deleteSession, deleteSessions, getSession, insertSession, listSessions } from '../../db/sessions/rows.ts';
import { readSessionStatus } from '../../db/sessions/status.ts';
import { abortSession, pauseSession, resumeSession } from '../../db/sessions/control.ts';
import { checkAgeFilter, type SessionAgeFilter } from '../../domain/sessions.ts';
import { checkSessionInput } from '../session-checks.ts';
import { mergeRollout } from '../../domain/rollout-policy.ts';
import { badInput, conflict, notFound } from '../errors.ts';
import { messages, sessionView } from '../views.ts';
import type { ApiContext } from '../context.ts';
import type { Resolvers } from '../generated/types.ts';
import type { SessionStatusParent } from '../views.ts';
import { sessionJobCounts } from '../../engine/queue/open-jobs.ts';
import { sessionTroubles, type SessionTroubles } from '../../db/components/blocked.ts';
import { SESSION_RESULT_WORDS, sessionResult, type SessionResult } from '../../domain/session-result.ts';
import type { SessionRow } from '../../db/schema.ts';
import type { SessionKey } from '../../db/sessions/rows.ts';
import { currentTraceparent } from '../../observability/tracing.ts';
import { requestTraceparent } from '../../observability/logging.ts';

function ageFilter(a: SessionAgeFilter): SessionAgeFilter {
  const problems = checkAgeFilter(a);
  if (problems.length) throw badInput(problems);
  return a;
}

async function existing(ctx: ApiContext, name: string) {
  const s = await getSession(ctx.db, ctx.tenantKey, name);
  if (!s) throw notFound('session', name);
  return s;
}

async function extendedStatus(ctx: ApiContext, tenantKey: string, name: string): Promise<SessionStatusParent | null> {
  return readSessionStatus(ctx.db, { tenantKey, name });
}

/**
 * Failed nodes as an extended status tells them: exact when computed live; a saved snapshot's
 * percentage rounds to 0 for one failure in more than 20,000 nodes, so its failure groups count too.
 */
function failedNodes(p: SessionStatusParent): number {
  const grouped = p.failureReasons.reduce((n, g) => n + g.count, 0);
  return Math.max(Math.round((p.percentFailed * p.managedComponentsCount) / 100), p.percentFailed > 0 ? 1 : 0, grouped);
}

type ResultFacts = Pick<SessionRow, 'status' | 'paused' | 'aborted' | 'error'>;

/** The session's result (domain/session-result.ts): only an ended session's needs its failed nodes. */
async function resultOf(ctx: ApiContext, key: SessionKey, s: ResultFacts, status?: SessionStatusParent): Promise<SessionResult> {
  const p = s.status === 'complete' ? (status ?? (await extendedStatus(ctx, key.tenantKey, key.name))) : null;
  return sessionResult({
    status: s.status as 'pending' | 'running' | 'complete',
    paused: s.paused,
    aborted: s.aborted,
    hasError: s.error !== null,
    failedNodes: p ? failedNodes(p) : 0,
  });
}

/** blocked and retrying come from one read per extended status object (both fields are usually asked for). */
const troubles = new WeakMap<SessionStatusParent, Promise<SessionTroubles>>();
function troublesOf(ctx: ApiContext, p: SessionStatusParent): Promise<SessionTroubles> {
  if (p.savedAt || p.status === 'complete') return Promise.resolve({ blocked: [], retrying: [] });
  let t = troubles.get(p);
  if (!t) {
    t = sessionTroubles(ctx.db, { tenantKey: ctx.tenantKey, name: p.name });
    troubles.set(p, t);
  }
  return t;
}

export const sessionResolvers: Resolvers = {
  Query: {
    sessions: async (_p, args, ctx) => (await listSessions(ctx.db, { tenant: ctx.tenant, ...ageFilter(args) })).map(sessionView),
    session: async (_p, { name }, ctx) => {
      const s = await getSession(ctx.db, ctx.tenantKey, name);
      return s ? sessionView(s) : null;
    },
    sessionStatus: (_p, { name }, ctx) => extendedStatus(ctx, ctx.tenantKey, name),
  },
  Session: {
    extendedStatus: async (s, _a, ctx) => (await extendedStatus(ctx, s.tenantKey, s.name))!,
    // Enum fields resolve to the stored strings (api/enums.ts).
    result: (s, _a, ctx) => resultOf(ctx, s, { ...s, status: s.status.status, error: s.status.error ?? null }),
    resultText: async (s, _a, ctx) =>
      SESSION_RESULT_WORDS[await resultOf(ctx, s, { ...s, status: s.status.status, error: s.status.error ?? null })],
  },
  SessionExtendedStatus: {
    jobs: (s, _a, ctx) => sessionJobCounts(ctx.db, ctx.tenantKey, s.name),
    blocked: async (s, _a, ctx) => (await troublesOf(ctx, s)).blocked,
    retrying: async (s, _a, ctx) => (await troublesOf(ctx, s)).retrying,
    result: async (s, _a, ctx) => {
      const row = await getSession(ctx.db, ctx.tenantKey, s.name);
      return resultOf(
        ctx,
        { tenantKey: ctx.tenantKey, name: s.name },
        row ?? { status: s.status, paused: s.paused, aborted: false, error: null },
        s,
      );
    },
  },
  Mutation: {
    createSession: async (_p, { input }, ctx) => {
      await ctx.requireKnownTenant();
      // The checks read image manifests over HTTP: before the transaction, so no connection is held meanwhile.
      const c = await checkSessionInput(ctx, input);
      if (c.errors.length) throw badInput(c.errors, c.templateErrors ? 'Session template fails check' : undefined);
      const s = c.session!;
      const template = c.template!;
      return transaction(ctx.db, async (tx) => {
        const row = await insertSession(tx, {
          tenantKey: ctx.tenantKey,
          tenant: ctx.tenant,
          name: s.name,
          operation: s.operation,
          templateName: s.templateName,
          limit: s.limit,
          stage: s.stage,
          includeDisabled: s.includeDisabled,
          status: 'pending',
          rollout: mergeRollout(template.rollout, s.rollout),
          createdBy: ctx.actor,
          // Its setup, action jobs and outside calls join this request's trace, and the engine's lines
          // about it carry its trace id: the request span's, or with tracing off the one its lines carry.
          traceContext: currentTraceparent() ?? requestTraceparent(ctx.logger),
        });
        if (!row) throw conflict(`a session named "${s.name}" already exists`, 'name');
        await ctx.scheduler.kick(tx, ['session-setup']);
        return { session: sessionView(row), warnings: messages(c.warnings) };
      });
    },
    deleteSession: async (_p, { name }, ctx) => {
      const gone = await transaction(ctx.db, (tx) => deleteSession(tx, ctx.tenantKey, name));
      if (!gone) throw notFound('session', name);
      return true;
    },
    pauseSession: async (_p, { name, reason }, ctx) => {
      await existing(ctx, name);
      await transaction(ctx.db, (tx) => pauseSession(tx, ctx.tenantKey, name, `paused by ${ctx.actor}${reason ? `: ${reason}` : ''}`));
      return sessionView(await existing(ctx, name));
    },
    resumeSession: async (_p, { name }, ctx) => {
      await existing(ctx, name);
      await transaction(ctx.db, async (tx) => {
        if (await resumeSession(tx, ctx.tenantKey, name)) await ctx.scheduler.kick(tx, ['status']);
      });
      return sessionView(await existing(ctx, name));
    },
    abortSession: async (_p, { name }, ctx) => {
      await existing(ctx, name);
      const stopped = await transaction(ctx.db, async (tx) => {
        const ids = await abortSession(tx, ctx.tenantKey, name, ctx.actor);
        await ctx.scheduler.kick(tx, ['session-completion']);
        return ids ?? [];
      });
      return { session: sessionView(await existing(ctx, name)), stopped };
    },
    deleteSessions: async (_p, args, ctx) => {
      const f = ageFilter(args);
      const names = await transaction(ctx.db, (tx) => deleteSessions(tx, { ...f, tenant: ctx.tenantKey }));
      return { count: names.length, names };
    },
  },
};
