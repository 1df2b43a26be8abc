/**
 * A session's life as the session operators drive it: pending sessions are set up and marked running,
 * running sessions whose nodes are all done are completed (with their status snapshot), old complete
 * sessions are deleted. Each write NOTIFYs the session's subscribers.
 */
import { and, asc, eq, lt, ne, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { sessions, type SessionRow } from '../schema.ts';
import { notifySessionChanged } from '../events.ts';
import { deleteSnapshots, type SessionKey } from './rows.ts';
import { readStatusCounts, saveSessionStatusSnapshot } from './status.ts';
import { sessionResult, type EndedResult } from '../../domain/session-result.ts';
import { countSessionEnds } from '../components/quarantine.ts';

/** Sessions waiting for setup, oldest first (every tenant); not those waiting for a second admin's approval. */
export async function pendingSessions(db: Db): Promise<SessionRow[]> {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.status, 'pending'), sql`(${sessions.approvalNeeded} = '' or ${sessions.approvedBy} is not null)`))
    .orderBy(asc(sessions.startTime), asc(sessions.name));
}

/** Setup done: running, with its node list and effective rollout policy. */
export async function markRunning(db: Db, s: SessionKey, ids: readonly string[], rollout: Record<string, unknown> | null): Promise<void> {
  await db
    .update(sessions)
    .set({ status: 'running', components: ids.join(','), rollout })
    .where(and(eq(sessions.tenantKey, s.tenantKey), eq(sessions.name, s.name), eq(sessions.status, 'pending')));
  await notifySessionChanged(db, s.tenantKey, s.name);
}

/** How a session ended: its result and its nodes by outcome, failures grouped by reason (the end-of-session log line). */
export interface SessionEnd {
  result: EndedResult;
  nodes: number;
  succeeded: number;
  failed: number;
  /** Failure reason -> nodes. */
  failures: Record<string, number>;
  duration: string;
}

/**
 * Complete a session (with `error` when its setup failed) and save its extended status snapshot
 * (BOS POST /sessions/{id}/status), in the caller's transaction; each node it owns is counted for
 * quarantine (db/components/quarantine.ts). Null when it was complete already.
 */
export async function completeSession(tx: Db, s: SessionKey, error: string | null, actor: string): Promise<SessionEnd | null> {
  const [done] = await tx
    .update(sessions)
    .set({ status: 'complete', endTime: sql`now()`, error: error === null ? sql`${sessions.error}` : error })
    .where(and(eq(sessions.tenantKey, s.tenantKey), eq(sessions.name, s.name), ne(sessions.status, 'complete')))
    .returning({ aborted: sessions.aborted, error: sessions.error, endTime: sessions.endTime });
  if (!done) return null;
  await notifySessionChanged(tx, s.tenantKey, s.name);
  await countSessionEnds(tx, s, done.endTime!, actor);
  const snapshot = (await saveSessionStatusSnapshot(tx, s))!;
  const counts = await readStatusCounts(tx, s);
  const result = sessionResult({
    status: 'complete',
    paused: false,
    aborted: done.aborted,
    hasError: done.error !== null,
    failedNodes: counts.failed,
  });
  return {
    result: result as EndedResult,
    nodes: counts.owned + counts.staged,
    succeeded: counts.successful,
    failed: counts.failed,
    failures: Object.fromEntries(snapshot.failureReasons.map((g) => [g.key, g.count])),
    duration: snapshot.timing.duration,
  };
}

/**
 * Running sessions with no enabled component and no staged component left (BOS session_completion),
 * with their trace context (the completion's lines carry its trace id).
 */
export async function finishedSessions(db: Db): Promise<Array<SessionKey & Pick<SessionRow, 'traceContext'>>> {
  return db
    .select({ tenantKey: sessions.tenantKey, name: sessions.name, traceContext: sessions.traceContext })
    .from(sessions)
    .where(
      and(
        eq(sessions.status, 'running'),
        sql`not exists (select 1 from components c where c.session = ${sessions.name} and c.session_tenant = ${sessions.tenantKey} and c.enabled)`,
        sql`not exists (select 1 from components c where c.staged_session = ${sessions.name} and c.staged_session <> '')`,
      ),
    );
}

/** Delete complete sessions that started more than `seconds` ago (session_cleanup), with their snapshots. */
export async function deleteOldSessions(db: Db, seconds: number): Promise<number> {
  const gone = await db
    .delete(sessions)
    .where(and(eq(sessions.status, 'complete'), lt(sessions.startTime, sql`now() - make_interval(secs => ${seconds})`)))
    .returning({ tenantKey: sessions.tenantKey, name: sessions.name });
  await deleteSnapshots(db, gone);
  return gone.length;
}
