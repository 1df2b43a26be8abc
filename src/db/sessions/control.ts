/**
 * Pause, resume and abort (Beyond BOS). A paused or aborted session's nodes get no new action; the
 * rollout progress a resume records (canary accepted, failures so far) lives in real columns.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, sessions } from '../schema.ts';
import { appendEvents, notifySessionChanged, type NewEvent } from '../events.ts';
import type { SessionKey } from './rows.ts';

const running = (s: SessionKey) => and(eq(sessions.tenantKey, s.tenantKey), eq(sessions.name, s.name), eq(sessions.status, 'running'));

export async function pauseSession(db: Db, tenantKey: string, name: string, reason: string): Promise<boolean> {
  const s = { tenantKey, name };
  const r = await db
    .update(sessions)
    .set({ paused: true, pauseReason: reason })
    .where(and(running(s), eq(sessions.paused, false)))
    .returning({ name: sessions.name });
  if (r.length) await notifySessionChanged(db, s.tenantKey, s.name);
  return r.length > 0;
}

/** Resume a paused session; failures so far no longer count against its budget, a failed canary is accepted. */
export async function resumeSession(db: Db, tenantKey: string, name: string): Promise<boolean> {
  const s = { tenantKey, name };
  const r = await db
    .update(sessions)
    .set({
      paused: false,
      pauseReason: null,
      canaryAccepted: true,
      failedAtResume: sql`(select count(*)::int from components c where c.session = ${sessions.name}
      and c.session_tenant = ${sessions.tenantKey} and c.status = 'failed')`,
    })
    .where(and(running(s), eq(sessions.paused, true)))
    .returning({ name: sessions.name });
  if (r.length) await notifySessionChanged(db, s.tenantKey, s.name);
  return r.length > 0;
}

/**
 * Abort: the session's nodes stay where they are, are disabled and marked failed with a clear error
 * (reason `aborted`); the session then completes. Returns the nodes stopped, null when no such
 * session is still open.
 */
export async function abortSession(db: Db, tenantKey: string, name: string, actor: string): Promise<string[] | null> {
  const s = { tenantKey, name };
  const open = await db
    .update(sessions)
    .set({ aborted: true, paused: false })
    .where(and(eq(sessions.tenantKey, s.tenantKey), eq(sessions.name, s.name), sql`${sessions.status} <> 'complete'`))
    .returning({ name: sessions.name });
  if (open.length === 0) return null;
  await notifySessionChanged(db, s.tenantKey, s.name);
  const error = `Session ${s.name} aborted by ${actor}; the node was left where it was`;
  const stopped = await db
    .update(components)
    .set({ enabled: false, statusOverride: 'failed', error, failureReason: 'aborted', updatedAt: sql`now()` })
    .where(and(eq(components.session, s.name), eq(components.sessionTenant, s.tenantKey), eq(components.enabled, true)))
    .returning({ id: components.id, phase: components.phase });
  await appendEvents(
    db,
    stopped.map(
      (x): NewEvent => ({
        componentId: x.id,
        session: s.name,
        sessionTenant: s.tenantKey,
        kind: 'failed',
        actor,
        fromPhase: x.phase,
        toPhase: x.phase,
        toStatus: 'failed',
        error,
        reason: 'aborted',
      }),
    ),
  );
  return stopped.map((x) => x.id);
}
