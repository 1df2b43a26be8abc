/**
 * Components as the operators see them: what the status decision reads, what acting needs, the row
 * version read, and the owning session's rollout policy. Selections are data (engine/selection.ts
 * evaluates the same objects for explain) and are read a page at a time, keyset on id.
 */
import { and, asc, eq, gt, isNull, lt, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { actedBatches, components, sessions } from '../schema.ts';
import type { DecisionInput } from '../../domain/status-decision.ts';
import type { ComponentFields } from '../../domain/components.ts';
import { anyOf, rowVersion } from '../sql.ts';
import { componentDeploys } from '../deploys.ts';

/** A component as the operators see it: what the status decision reads, plus what acting needs. */
export interface EngineComponent
  extends DecisionInput,
    Pick<
      ComponentFields,
      | 'id'
      | 'enabled'
      | 'statusOverride'
      | 'actualUpdatedAt'
      | 'powerOnAttempts'
      | 'powerOffGracefulAttempts'
      | 'powerOffForcefulAttempts'
      | 'session'
      | 'sessionTenant'
      | 'retryPolicy'
    > {
  /** The row version read (xmin); writes that follow a read are guarded by it. */
  version: string;
  /** The owning session's rollout policy (escalation overrides), null when none. */
  policy: Record<string, unknown> | null;
  /** The owning session's trace (W3C traceparent), null when none: its actions join it. */
  trace: string | null;
  /**
   * Rescued (docs/rescue.md): its desired* fields here are then the rescue image, with no
   * configuration; the stored desired state stays as it was for the unrescue.
   */
  rescued: boolean;
}

/** The attempt counters, by their column names (what an action operator counts). */
export const ATTEMPT_COUNTERS = {
  power_on_attempts: components.powerOnAttempts,
  power_off_graceful_attempts: components.powerOffGracefulAttempts,
  power_off_forceful_attempts: components.powerOffForcefulAttempts,
} as const;
export type AttemptCounter = keyof typeof ATTEMPT_COUNTERS;

/** A component's count of one kind of attempt. */
export function attempts(c: EngineComponent, counter: AttemptCounter): number {
  if (counter === 'power_on_attempts') return c.powerOnAttempts;
  if (counter === 'power_off_graceful_attempts') return c.powerOffGracefulAttempts;
  return c.powerOffForcefulAttempts;
}

export interface ComponentSelection {
  /** Only enabled components (every operator but actual-state-cleanup). */
  enabled?: boolean;
  /** Computed statuses to select. */
  statuses?: string[];
  /** Phases to select (the disk deploy's steps, whose computed status is stable). */
  phases?: string[];
  /** Computed statuses to leave out. */
  excludeStatuses?: string[];
  /** Only these ids. */
  ids?: string[];
  /** Only components of this session. */
  session?: { tenantKey: string; name: string };
  /** Leave out components of paused or aborted sessions (action operators start nothing for them). */
  excludePausedSessions?: boolean;
  /** Actual boot state set and older than this. */
  actualOlderThan?: Date;
  /**
   * Only rows written by a transaction this snapshot (passSnapshot) may not have seen: one in flight
   * when it was taken, or begun after. Every writer counts, whatever clock it stamps (the row's xmin).
   */
  changedSince?: string;
  /** With changedSince: these ids too, changed or not (the status operator's transit re-poll). */
  orIds?: string[];
  /** Keyset paging: ids after this one, at most `limit` rows. */
  afterId?: string;
  limit?: number;
}

const rescued = sql<boolean>`(${components.rescueKernel} <> '')`;
/** What the engine boots the node into: its rescue image while rescued, else its desired state. */
const target = (rescue: AnyColumn, desired: AnyColumn) => sql<string>`case when ${rescued} then ${rescue} else ${desired} end`;

const FIELDS = {
  id: components.id,
  version: rowVersion(components),
  enabled: components.enabled,
  phase: components.phase,
  status: components.status,
  statusOverride: components.statusOverride,
  lastAction: components.lastAction,
  lastActionFailed: components.lastActionFailed,
  lastActionAt: components.lastActionAt,
  desiredKernel: target(components.rescueKernel, components.desiredKernel),
  desiredKernelParameters: target(components.rescueKernelParameters, components.desiredKernelParameters),
  desiredInitrd: target(components.rescueInitrd, components.desiredInitrd),
  desiredConfiguration: sql<string>`case when ${rescued} then '' else ${components.desiredConfiguration} end`,
  rescued,
  actualKernel: components.actualKernel,
  actualKernelParameters: components.actualKernelParameters,
  actualInitrd: components.actualInitrd,
  actualUpdatedAt: components.actualUpdatedAt,
  powerOnAttempts: components.powerOnAttempts,
  powerOffGracefulAttempts: components.powerOffGracefulAttempts,
  powerOffForcefulAttempts: components.powerOffForcefulAttempts,
  error: components.error,
  failureReason: components.failureReason,
  powerUnknownSince: components.powerUnknownSince,
  session: components.session,
  sessionTenant: components.sessionTenant,
  retryPolicy: components.retryPolicy,
  policy: sessions.rollout,
  trace: sessions.traceContext,
};

const hasActualState = sql`(${components.actualKernel} <> '' or ${components.actualInitrd} <> '' or ${components.actualKernelParameters} <> '')`;

function where(s: ComponentSelection): SQL | undefined {
  return and(
    s.enabled === undefined ? undefined : eq(components.enabled, s.enabled),
    s.statuses ? anyOf(components.status, s.statuses) : undefined,
    s.phases ? anyOf(components.phase, s.phases) : undefined,
    s.excludeStatuses ? sql`${components.status} <> all(${sql.param(s.excludeStatuses)}::text[])` : undefined,
    s.ids ? anyOf(components.id, s.ids) : undefined,
    s.session ? and(eq(components.session, s.session.name), eq(components.sessionTenant, s.session.tenantKey)) : undefined,
    s.actualOlderThan
      ? and(hasActualState, or(isNull(components.actualUpdatedAt), lt(components.actualUpdatedAt, s.actualOlderThan)))
      : undefined,
    s.excludePausedSessions ? sql`not coalesce(${sessions.paused} or ${sessions.aborted}, false)` : undefined,
    s.changedSince === undefined
      ? undefined
      : s.orIds?.length
        ? or(writtenSince(s.changedSince), anyOf(components.id, s.orIds))
        : writtenSince(s.changedSince),
    s.afterId === undefined ? undefined : gt(components.id, s.afterId),
  );
}

/** The statement's snapshot's xmax, a full (64-bit) transaction id: every visible row was written before it. */
const XMAX = sql`pg_snapshot_xmax(pg_current_snapshot())::text::bigint`;

/**
 * Rows of `table` whose writer (xmin, 32 bits) the snapshot `since` (pg_snapshot text) does not see as
 * committed: in flight when it was taken, or begun after it. The writer's full transaction id is
 * placed from XMAX: a visible row's writer is below it, so its distance back modulo 2^32 places it
 * exactly, wraparound included (a frozen row reads as far back, long committed). Exact whatever else
 * runs on the server: a transaction of another database in flight at `since` wrote none of our rows,
 * where the snapshot's xmin alone (the oldest transaction in flight anywhere) made every row written
 * after it count as changed.
 */
function rowWrittenSince(table: SQL, since: string): SQL {
  const xid = sql`greatest(${XMAX} - ((${XMAX} - ${table}.xmin::text::bigint) % 4294967296 + 4294967296) % 4294967296, 3)`;
  return sql`not pg_visible_in_snapshot(${xid}::text::xid8, ${since}::pg_snapshot)`;
}

/**
 * A component changed: its row, its disk deploy's (the agent's heartbeats write only that one), or an
 * action on it (acted_batches: acting writes no component row).
 */
function writtenSince(since: string): SQL {
  return sql`(${rowWrittenSince(sql`${components}`, since)} or exists (select 1 from ${componentDeploys} d
    where d.id = ${components.id} and ${rowWrittenSince(sql.raw('d'), since)})
    or ${components.id} in (select unnest(a.ids) from ${actedBatches} a where ${rowWrittenSince(sql.raw('a'), since)}))`;
}

/** Record that an action job's batch acted on these components (on the transaction that completes it). */
export async function recordActed(db: Db, ids: string[]): Promise<void> {
  if (ids.length) await db.insert(actedBatches).values({ ids });
}

/**
 * Forget the acted batches a pass begun at `started` (passSnapshot) saw committed: it read their
 * components, or an earlier pass of this process did (a process's first pass is full).
 */
export async function forgetActed(db: Db, started: string): Promise<void> {
  await db.execute(sql`delete from ${actedBatches} a where not ${rowWrittenSince(sql.raw('a'), started)}`);
}

/**
 * Where a pass starting now stands: the snapshot (xmin, xmax and the transactions in flight) as text.
 * A later pass with `changedSince` set to it reads what this one may not have seen.
 */
export async function passSnapshot(db: Db): Promise<string> {
  const r = await db.execute<{ s: string }>(sql`select pg_current_snapshot()::text as s`);
  return r.rows[0]!.s;
}

/** Select components in id order (the order chunks are acted on, so chunks are stable across ticks). */
export async function selectComponents(db: Db, s: ComponentSelection): Promise<EngineComponent[]> {
  // The owning session's policy comes with the row (escalation overrides, waves).
  const q = db
    .select(FIELDS)
    .from(components)
    .leftJoin(
      sessions,
      and(eq(sessions.name, components.session), eq(sessions.tenantKey, components.sessionTenant), ne(components.session, '')),
    )
    .where(where(s))
    .orderBy(asc(components.id));
  return s.limit && s.limit > 0 ? q.limit(s.limit) : q;
}

/**
 * The selection a page at a time (max_component_batch_size rows, keyset on id), so an operator holds
 * one chunk in memory however large the machine. 0 = everything in one page.
 */
export async function* selectPages(db: Db, s: ComponentSelection, size: number): AsyncGenerator<EngineComponent[]> {
  let afterId: string | undefined;
  for (;;) {
    const page = await selectComponents(db, { ...s, afterId, limit: size > 0 ? size : undefined });
    if (page.length === 0) return;
    yield page;
    if (size <= 0 || page.length < size) return;
    afterId = page[page.length - 1]!.id;
  }
}
