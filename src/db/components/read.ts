/**
 * Component reads for the API and the write paths. Lists are keyset-paged on the sort column and id
 * (`(col, id) > (after) order by col, id limit n`, each order on an index of its own), so any page
 * costs what the first does however many rows there are; filters use the components table's indexes.
 */
import { and, asc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type ComponentRow } from '../schema.ts';
import { visibleTo } from '../tenants.ts';
import { anyOf } from '../sql.ts';
import { runOf } from './quarantine.ts';
import type { FailureRun } from '../../domain/quarantine.ts';

/** A component that exists: its run of failed sessions, and whether it is rescued (docs/rescue.md). */
export interface ExistingComponent extends FailureRun {
  rescued: boolean;
}

export interface ComponentQuery {
  ids?: readonly string[] | null;
  session?: string | null;
  stagedSession?: string | null;
  enabled?: boolean | null;
  phase?: string | null;
  /** Any of these computed statuses. */
  status?: readonly string[] | null;
  /** Any of these failure reasons. */
  failureReason?: readonly string[] | null;
  /** Ids starting with this (an xname prefix: a cabinet, chassis, slot or node). */
  idPrefix?: string | null;
  /** Changed (updated_at) in the last this many seconds, by the database's clock. */
  changedWithinSeconds?: number | null;
  /** Not changed for at least this many seconds, by the database's clock. */
  unchangedForSeconds?: number | null;
  /** null: no tenant restriction. */
  tenant: string | null;
}

/** Sort orders of a component list: the column, each on an index with id (db/schema.ts). */
export const COMPONENT_ORDERS = {
  id: components.id,
  status: components.status,
  phase: components.phase,
  failure_reason: components.failureReason,
  session: components.session,
  updated_at: components.updatedAt,
} as const;
export type ComponentOrder = keyof typeof COMPONENT_ORDERS;

/** Where a page starts: after the row with this sort value (the column as text) and id. */
export interface PageStart {
  key: string;
  id: string;
}

export interface PageRequest {
  first: number;
  order?: ComponentOrder;
  descending?: boolean;
  /** For the id order, the last id; for the others, the last row's sort key and id. */
  after?: PageStart | null;
}

export function componentWhere(q: ComponentQuery): SQL | undefined {
  return and(
    q.ids ? anyOf(components.id, q.ids) : undefined,
    q.session != null ? eq(components.session, q.session) : undefined,
    q.stagedSession != null ? eq(components.stagedSession, q.stagedSession) : undefined,
    q.enabled != null ? eq(components.enabled, q.enabled) : undefined,
    q.phase != null ? eq(components.phase, q.phase) : undefined,
    q.status ? anyOf(components.status, q.status) : undefined,
    q.failureReason ? anyOf(components.failureReason, q.failureReason) : undefined,
    // A range on the primary key: every id with the prefix sorts between it and it + '~' (xnames are [a-z0-9]).
    q.idPrefix ? and(gte(components.id, q.idPrefix), lt(components.id, `${q.idPrefix}~`)) : undefined,
    // No index on updated_at (db/schema.ts): these narrow the rows the other conditions select.
    q.changedWithinSeconds != null ? sql`${components.updatedAt} >= now() - make_interval(secs => ${q.changedWithinSeconds})` : undefined,
    q.unchangedForSeconds != null ? sql`${components.updatedAt} < now() - make_interval(secs => ${q.unchangedForSeconds})` : undefined,
    q.tenant !== null ? visibleTo(q.tenant, components.id) : undefined,
  );
}

/**
 * One page: up to `first` rows after `after` in the order asked for (id by default), plus whether
 * more follow and the last row's sort key (the column as text, exact for timestamps) for the next.
 */
export async function listComponents(db: Db, q: ComponentQuery, page: PageRequest) {
  const order = page.order ?? 'id';
  const col = COMPONENT_ORDERS[order];
  const dir = page.descending ? sql`desc` : sql`asc`;
  const cmp = page.descending ? sql`<` : sql`>`;
  const start = page.after
    ? order === 'id'
      ? sql`${components.id} ${cmp} ${page.after.id}`
      : sql`(${col}, ${components.id}) ${cmp} (${page.after.key}::${sql.raw(order === 'updated_at' ? 'timestamptz' : 'text')}, ${page.after.id})`
    : undefined;
  const rows = await db
    .select({ row: components, key: sql<string>`${col}::text` })
    .from(components)
    .where(and(componentWhere(q), start))
    .orderBy(...(order === 'id' ? [sql`${components.id} ${dir}`] : [sql`${col} ${dir}`, sql`${components.id} ${dir}`]))
    .limit(page.first + 1);
  const kept = rows.slice(0, page.first);
  return { rows: kept.map((r) => r.row), hasNextPage: rows.length > page.first, lastKey: kept.at(-1)?.key ?? null };
}

export async function countComponents(db: Db, q: ComponentQuery): Promise<number> {
  const [r] = await db.select({ n: sql<number>`count(*)::int` }).from(components).where(componentWhere(q));
  return r?.n ?? 0;
}

export async function getComponent(db: Db, id: string, tenant: string | null): Promise<ComponentRow | null> {
  const rows = await db
    .select()
    .from(components)
    .where(and(eq(components.id, id), visibleTo(tenant, components.id)));
  return rows[0] ?? null;
}

/** Lock and read these components (sorted by id, so concurrent bulk writers lock in one order). */
export async function lockComponents(db: Db, ids: readonly string[]): Promise<ComponentRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(components).where(anyOf(components.id, ids)).orderBy(asc(components.id)).for('update');
}

/** Read these components (no lock). */
export async function readComponents(db: Db, ids: readonly string[]): Promise<ComponentRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(components).where(anyOf(components.id, ids));
}

/** Ids of the components a session filter selects (locked, for a bulk patch). */
export async function lockSessionComponents(db: Db, session: string, tenant: string | null): Promise<string[]> {
  const rows = await db
    .select({ id: components.id })
    .from(components)
    .where(and(eq(components.session, session), visibleTo(tenant, components.id)))
    .orderBy(asc(components.id))
    .for('update');
  return rows.map((r) => r.id);
}

export async function deleteComponent(db: Db, id: string, tenant: string | null): Promise<ComponentRow | null> {
  const rows = await db
    .delete(components)
    .where(and(eq(components.id, id), visibleTo(tenant, components.id)))
    .returning();
  return rows[0] ?? null;
}

/** Which of these ids are components, each with its run of failed sessions (domain/quarantine.ts) and whether it is rescued. */
export async function existingComponents(db: Db, ids: readonly string[]): Promise<Map<string, ExistingComponent>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({
      id: components.id,
      failedSessions: components.failedSessions,
      sessionFailures: components.sessionFailures,
      rescueKernel: components.rescueKernel,
    })
    .from(components)
    .where(anyOf(components.id, ids));
  return new Map(rows.map((r) => [r.id, { ...runOf(r), rescued: r.rescueKernel !== '' }]));
}
