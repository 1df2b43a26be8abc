/**
 * Power drift (operators/power-drift.ts): the stable nodes whose power bootorch left in a known state,
 * and the mark on those found otherwise (`power_drift`: expected, actual, since). What bootorch left:
 * - on: the node is done (disabled, phase '', no override) and booted the artifacts it was given
 *   (desired = actual, desired not empty);
 * - off: done, with an empty desired state, after bootorch acted on it (a shutdown; its last action
 *   is not '' nor `newly_discovered`).
 * A node bootorch never booted or shut down has no expected power and is never read for drift.
 */
import { and, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type PowerDriftMark } from '../schema.ts';
import { appendEvents } from '../events.ts';
import { anyOf } from '../sql.ts';

export type ExpectedPower = 'on' | 'off';

export interface DriftCandidate {
  id: string;
  session: string;
  sessionTenant: string;
  expected: ExpectedPower;
  /** The mark the node carries now, if any. */
  drift: PowerDriftMark | null;
}

const done = sql`${components.enabled} = false and ${components.phase} = '' and ${components.statusOverride} = ''`;
const booted = sql`${components.desiredKernel} <> '' and ${components.desiredKernel} = ${components.actualKernel}
  and ${components.desiredInitrd} = ${components.actualInitrd}
  and ${components.desiredKernelParameters} = ${components.actualKernelParameters}`;
const shutDown = sql`${components.desiredKernel} = '' and ${components.lastAction} not in ('', 'newly_discovered')`;
const candidate = sql`${done} and ((${booted}) or (${shutDown}))`;
/** A stable spread of the nodes over `slices` slices (Postgres's hashtext, shifted to be non-negative). */
const sliceOf = (slices: number) => sql`mod(hashtext(${components.id})::bigint + 2147483648, ${slices})`;

/** How many nodes have an expected power (the sweep's size). */
export async function countDriftCandidates(db: Db): Promise<number> {
  const [r] = await db.select({ n: sql<number>`count(*)::int` }).from(components).where(candidate);
  return r?.n ?? 0;
}

/** The nodes with an expected power in slice `slice` of `slices`. */
export async function driftCandidates(db: Db, slice: number, slices: number): Promise<DriftCandidate[]> {
  return db
    .select({
      id: components.id,
      session: components.session,
      sessionTenant: components.sessionTenant,
      expected: sql<ExpectedPower>`case when ${components.desiredKernel} <> '' then 'on' else 'off' end`,
      drift: components.powerDrift,
    })
    .from(components)
    .where(sql`${candidate} and ${sliceOf(slices)} = ${slice}`)
    .orderBy(components.id);
}

/**
 * Mark the nodes found with power other than expected: a node already marked the same way keeps its
 * mark and its `since` (one event per drift, however many sweeps see it); the others get a mark and a
 * `drift` event. Only nodes that are still candidates now are marked (a session may have taken one since).
 */
export async function markDrift(db: Db, found: Array<{ c: DriftCandidate; actual: ExpectedPower }>, actor: string, now: Date) {
  const fresh = found.filter(({ c, actual }) => c.drift?.actual !== actual || c.drift.expected !== c.expected);
  if (fresh.length === 0) return [];
  const since = now.toISOString();
  const marked = new Set<string>();
  for (const expected of ['on', 'off'] as const) {
    const ids = fresh.filter(({ c }) => c.expected === expected).map(({ c }) => c.id);
    if (!ids.length) continue;
    const mark: PowerDriftMark = { expected, actual: expected === 'on' ? 'off' : 'on', since };
    const rows = await db
      .update(components)
      .set({ powerDrift: mark })
      .where(and(anyOf(components.id, ids), candidate))
      .returning({ id: components.id });
    for (const r of rows) marked.add(r.id);
  }
  const kept = fresh.filter(({ c }) => marked.has(c.id));
  await appendEvents(
    db,
    kept.map(({ c, actual }) => ({
      componentId: c.id,
      session: c.session,
      sessionTenant: c.sessionTenant,
      kind: 'drift' as const,
      actor,
      error: `power ${actual}, but bootorch left it ${c.expected}: nothing is done about it`,
      data: { expected: c.expected, actual },
    })),
  );
  return kept.map(({ c }) => c);
}

/** The nodes read back as expected lose their mark, with an event saying the drift ended. */
export async function clearDrift(db: Db, back: DriftCandidate[], actor: string): Promise<void> {
  const marked = back.filter((c) => c.drift);
  if (!marked.length) return;
  await db
    .update(components)
    .set({ powerDrift: null })
    .where(
      anyOf(
        components.id,
        marked.map((c) => c.id),
      ),
    );
  await appendEvents(
    db,
    marked.map((c) => ({
      componentId: c.id,
      session: c.session,
      sessionTenant: c.sessionTenant,
      kind: 'drift' as const,
      actor,
      data: { expected: c.expected, actual: c.expected, since: c.drift!.since, ended: true },
    })),
  );
}

/** Marks on nodes that are no longer done (a session took them): the session's own reads take over. */
export async function clearDriftOfBusyNodes(db: Db): Promise<void> {
  await db
    .update(components)
    .set({ powerDrift: null })
    .where(and(isNotNull(components.powerDrift), sql`not (${candidate})`));
}

/** Nodes marked as drifted now (the metrics' gauge). */
export async function countDrifted(db: Db): Promise<number> {
  const [r] = await db.select({ n: sql<number>`count(*)::int` }).from(components).where(isNotNull(components.powerDrift));
  return r?.n ?? 0;
}
