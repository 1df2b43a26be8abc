/**
 * Quarantine (domain/quarantine.ts): each node's run of failed sessions, counted when a session
 * completes, read by the plan and explain, reset by a release. The counting rule is the domain's;
 * this module reads the nodes it can change and writes what the rule says, in the caller's transaction.
 */
import { and, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components } from '../schema.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { getOptions } from '../options.ts';
import { anyOf, arrayParam, unnestAs } from '../sql.ts';
import { succeeded } from '../sessions/status.ts';
import type { SessionKey } from '../sessions/rows.ts';
import { countSessionEnd, quarantineOf, quarantineWords, type FailureRun } from '../../domain/quarantine.ts';

/** A component's run of failed sessions as the domain reads it. */
export const runOf = (r: { failedSessions: number; sessionFailures: FailureRun['failures'] | null }): FailureRun => ({
  failedSessions: r.failedSessions,
  failures: r.sessionFailures ?? [],
});

/**
 * A session completed: count it for each node it still owns (a failure adds one, a success resets),
 * and write a `quarantine` event for each node whose run reaches the option's threshold now. Only
 * the nodes that can change are read: the failed ones and those with a run to reset.
 */
export async function countSessionEnds(tx: Db, s: SessionKey, at: Date, actor: string): Promise<void> {
  const owned = and(eq(components.session, s.name), eq(components.sessionTenant, s.tenantKey));
  const rows = await tx
    .select({
      id: components.id,
      failed: sql<boolean>`${components.status} = 'failed'`,
      succeeded: sql<boolean>`${succeeded}`,
      reason: components.failureReason,
      error: components.error,
      failedSessions: components.failedSessions,
      sessionFailures: components.sessionFailures,
    })
    .from(components)
    .where(and(owned, sql`(${components.status} = 'failed' or ${components.failedSessions} > 0)`));
  const changed = rows
    .map((r) => ({ id: r.id, before: runOf(r), after: countSessionEnd(runOf(r), r, s.name, at) }))
    .filter((x) => x.after !== x.before);
  if (changed.length === 0) return;
  const u = unnestAs('u', {
    id: arrayParam(
      changed.map((x) => x.id),
      'text',
    ),
    n: arrayParam(
      changed.map((x) => x.after.failedSessions),
      'int',
    ),
    failures: arrayParam(
      changed.map((x) => (x.after.failures.length ? JSON.stringify(x.after.failures) : null)),
      'text',
    ),
  });
  await tx
    .update(components)
    .set({ failedSessions: sql`u.n`, sessionFailures: sql`u.failures::jsonb`, updatedAt: sql`now()` })
    .from(u)
    .where(sql`${components.id} = u.id`);
  const k = (await getOptions(tx)).quarantine_after_failed_sessions;
  const events: NewEvent[] = [];
  for (const x of changed) {
    const q = quarantineOf(x.after, k);
    if (!q || quarantineOf(x.before, k)) continue;
    events.push({
      componentId: x.id,
      session: s.name,
      sessionTenant: s.tenantKey,
      kind: 'quarantine',
      actor,
      error: quarantineWords(x.id, q),
      reason: q.failures.at(-1)?.reason || null,
      data: { quarantined: true, failedSessions: q.failedSessions, threshold: k },
    });
  }
  await appendEvents(tx, events);
}

/**
 * Release these nodes from quarantine under threshold `k`: their run starts again from 0, with a
 * `quarantine` event naming who released them. Returns the ids released (those quarantined now).
 */
export async function releaseQuarantined(db: Db, ids: readonly string[], k: number, actor: string): Promise<string[]> {
  if (k <= 0 || ids.length === 0) return [];
  const released = await db
    .update(components)
    .set({ failedSessions: 0, sessionFailures: null, updatedAt: sql`now()` })
    .where(and(anyOf(components.id, [...ids]), gte(components.failedSessions, k)))
    .returning({ id: components.id, session: components.session, sessionTenant: components.sessionTenant });
  await appendEvents(
    db,
    released.map(
      (r): NewEvent => ({
        componentId: r.id,
        session: r.session,
        sessionTenant: r.sessionTenant,
        kind: 'quarantine',
        actor,
        data: { released: true, by: actor },
      }),
    ),
  );
  return released.map((r) => r.id).sort();
}
