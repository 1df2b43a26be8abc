/**
 * What the operators write on components, set-based: every function takes any number of components
 * and issues a constant number of statements (arrays through unnest), never one round trip per node.
 * Writes that follow a read carry the row version (`xmin`) they read, so a decision made on a row
 * that changed meanwhile (a new session took the node, the reporter reported) is dropped, and the
 * next tick decides again from the new level.
 */
import { sql } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Db } from '../client.ts';
import { components } from '../schema.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { arrayParam, rowVersion, unnestAs } from '../sql.ts';
import { ATTEMPT_COUNTERS, attempts, type AttemptCounter, type EngineComponent } from './select.ts';

/** The read rows as an unnest source `u(id, version)`, for a write guarded by the row version. */
const readRows = (rows: readonly EngineComponent[]) =>
  unnestAs('u', {
    id: arrayParam(
      rows.map((r) => r.id),
      'text',
    ),
    version: arrayParam(
      rows.map((r) => r.version),
      'text',
    ),
  });
const unchangedSinceRead = sql`${components.id} = u.id and ${rowVersion(components)} = u.version`;

/**
 * Record an action before its side effect (BOS's preset of last_action, CASMCMS-8609): stamp the
 * action, clear the error, count the attempt. A crash after this can never hide a power call.
 * Returns the components actually updated (one whose row changed since it was read is skipped).
 */
export async function recordAction(
  db: Db,
  rows: EngineComponent[],
  action: string,
  counter: AttemptCounter | null,
  actor: string,
): Promise<EngineComponent[]> {
  if (rows.length === 0) return [];
  const set: PgUpdateSetSource<typeof components> = {
    lastAction: action,
    lastActionFailed: false,
    lastActionAt: sql`now()`,
    error: '',
    updatedAt: sql`now()`,
  };
  if (counter) set[counterKey(counter)] = sql`${ATTEMPT_COUNTERS[counter]} + 1`;
  const updated = await db
    .update(components)
    .set(set)
    .from(readRows(rows))
    .where(sql`${unchangedSinceRead} and ${components.enabled}`)
    .returning({ id: components.id, version: rowVersion(components), status: components.status });
  const after = new Map(updated.map((x) => [x.id, x]));
  const kept = rows.filter((x) => after.has(x.id)).map((x) => ({ ...x, version: after.get(x.id)!.version, lastAction: action }));
  // The status the action leads to (e.g. power_off_gracefully_called), so each node's log is one unbroken chain.
  await appendEvents(
    db,
    kept.map(
      (x): NewEvent => ({
        componentId: x.id,
        session: x.session,
        sessionTenant: x.sessionTenant,
        kind: 'action',
        actor,
        action,
        fromPhase: x.phase,
        toPhase: x.phase,
        fromStatus: x.status,
        toStatus: after.get(x.id)!.status,
        data: counter ? { attempt: attempts(x, counter) + 1 } : null,
      }),
    ),
  );
  return kept;
}

function counterKey(counter: AttemptCounter): 'powerOnAttempts' | 'powerOffGracefulAttempts' | 'powerOffForcefulAttempts' {
  if (counter === 'power_on_attempts') return 'powerOnAttempts';
  if (counter === 'power_off_graceful_attempts') return 'powerOffGracefulAttempts';
  return 'powerOffForcefulAttempts';
}

export interface ComponentProblem {
  id: string;
  error: string;
  /** Closed failure reason (domain/failures.ts). */
  reason: string;
}

/** Errors and reasons per component, as an unnest source `u(id, error, reason)`. */
const problemRows = (problems: readonly ComponentProblem[]) =>
  unnestAs('u', {
    id: arrayParam(
      problems.map((p) => p.id),
      'text',
    ),
    error: arrayParam(
      problems.map((p) => p.error),
      'text',
    ),
    reason: arrayParam(
      problems.map((p) => p.reason),
      'text',
    ),
  });

/**
 * An action's call is about to be made (its job runs, maybe on a retry, maybe after waiting in the
 * queue): its waits (max_power_on_wait_time, ...) count from now, as they did when the tick called at
 * once. Only for rows unchanged since read and not timed out by status meanwhile; returns those.
 */
export async function claimAction(db: Db, rows: EngineComponent[]): Promise<EngineComponent[]> {
  if (rows.length === 0) return [];
  const updated = await db
    .update(components)
    .set({ lastActionAt: sql`now()` })
    .from(readRows(rows))
    .where(sql`${unchangedSinceRead} and not ${components.lastActionFailed}`)
    .returning({ id: components.id, version: rowVersion(components) });
  const after = new Map(updated.map((x) => [x.id, x.version]));
  return rows.filter((x) => after.has(x.id)).map((x) => ({ ...x, version: after.get(x.id)! }));
}

/**
 * Write each component's error and classified reason; with `fail`, also mark it failed
 * (status_override 'failed': the retry limit was reached, or the problem is permanent). The status
 * operator disables failed components on its next pass. Components no longer enabled are left alone.
 */
export async function recordProblems(
  db: Db,
  rows: EngineComponent[],
  problems: ComponentProblem[],
  actor: string,
  o: { fail?: boolean } = {},
): Promise<void> {
  if (problems.length === 0) return;
  // Only while the component is still enabled: a problem that arrives after the node was done or
  // disabled (a slow call of another status decision, answered after a later pass finished it) is
  // stale, and nothing would clear it from the disabled row.
  const written = await db
    .update(components)
    .set({ error: sql`u.error`, failureReason: sql`u.reason`, updatedAt: sql`now()`, ...(o.fail ? { statusOverride: 'failed' } : {}) })
    .from(problemRows(problems))
    .where(sql`${components.id} = u.id and ${components.enabled}`)
    .returning({ id: components.id });
  const live = new Set(written.map((w) => w.id));
  const byId = new Map(rows.map((r) => [r.id, r]));
  await appendEvents(
    db,
    problems
      .filter((p) => live.has(p.id))
      .map((p): NewEvent => {
        const r = byId.get(p.id);
        const where = {
          componentId: p.id,
          session: r?.session ?? '',
          sessionTenant: r?.sessionTenant ?? '',
          actor,
          error: p.error,
          reason: p.reason,
        };
        return o.fail
          ? { ...where, kind: 'failed', fromPhase: r?.phase, toPhase: r?.phase, fromStatus: r?.status, toStatus: 'failed' }
          : { ...where, kind: 'error' };
      }),
  );
}

/** Mark components failed with their problem (see recordProblems). */
export function failComponents(db: Db, rows: EngineComponent[], problems: ComponentProblem[], actor: string): Promise<void> {
  return recordProblems(db, rows, problems, actor, { fail: true });
}

/** Power-on: the token BSS returned for these components' boot parameters. */
export async function setDesiredBssToken(db: Db, ids: string[], token: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(components)
    .set({ desiredBssToken: token, updatedAt: sql`now()` })
    .from(unnestAs('u', { id: arrayParam(ids, 'text') }))
    .where(sql`${components.id} = u.id`);
}

/** Discovery: a disabled component for every inventory node bootorch does not know yet. */
export async function insertDiscovered(db: Db, ids: string[], actor: string): Promise<string[]> {
  if (ids.length === 0) return [];
  // INSERT ... SELECT FROM unnest: one parameter for any number of ids (the builder's VALUES takes one per value).
  const added = await db.execute<{ id: string }>(sql`insert into components (id, enabled, last_action, last_action_at)
    select id, false, 'newly_discovered', now() from unnest(${arrayParam(ids, 'text')}) as u(id)
    on conflict (id) do nothing returning id`);
  await appendEvents(
    db,
    added.rows.map(({ id }): NewEvent => ({ componentId: id, kind: 'action', actor, action: 'newly_discovered' })),
  );
  return added.rows.map((x) => x.id);
}

/**
 * Actual-state cleanup: forget what stale nodes claimed they booted. Rows written since they were
 * read (a report arrived meanwhile) are left alone, and get no event; returns the ids cleared.
 */
export async function clearActualState(db: Db, rows: EngineComponent[], actor: string): Promise<string[]> {
  if (rows.length === 0) return [];
  const cleared = await db
    .update(components)
    .set({
      actualKernel: '',
      actualKernelParameters: '',
      actualInitrd: '',
      actualBssToken: '',
      actualUpdatedAt: sql`now()`,
      lastAction: 'actual_state_cleanup',
      lastActionFailed: false,
      lastActionAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .from(readRows(rows))
    .where(unchangedSinceRead)
    .returning({ id: components.id });
  const done = new Set(cleared.map((r) => r.id));
  await appendEvents(
    db,
    rows
      .filter((r) => done.has(r.id))
      .map(
        (r): NewEvent => ({
          componentId: r.id,
          session: r.session,
          sessionTenant: r.sessionTenant,
          kind: 'action',
          actor,
          action: 'actual_state_cleanup',
        }),
      ),
  );
  return [...done];
}
