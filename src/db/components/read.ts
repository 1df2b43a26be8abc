/**
 * Component reads for the API and the write paths. Lists are keyset-paged on id (`id > after order by id limit n`), so any page costs
 * what the first does however many rows there are; filters use the components table's indexes.
 */
import { and, asc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type ComponentRow } from '../schema.ts';
import { visibleTo } from '../tenants.ts';
import { anyOf } from '../sql.ts';

export interface ComponentQuery {
  ids?: readonly string[] | null;
  session?: string | null;
  stagedSession?: string | null;
  enabled?: boolean | null;
  phase?: string | null;
  /** Any of these computed statuses. */
  status?: readonly string[] | null;
  /** null: no tenant restriction. */
  tenant: string | null;
}

export function componentWhere(q: ComponentQuery): SQL | undefined {
  return and(
    q.ids ? anyOf(components.id, q.ids) : undefined,
    q.session != null ? eq(components.session, q.session) : undefined,
    q.stagedSession != null ? eq(components.stagedSession, q.stagedSession) : undefined,
    q.enabled != null ? eq(components.enabled, q.enabled) : undefined,
    q.phase != null ? eq(components.phase, q.phase) : undefined,
    q.status ? anyOf(components.status, q.status) : undefined,
    q.tenant !== null ? visibleTo(q.tenant, components.id) : undefined,
  );
}

/** One page: up to `first` rows with id > after, plus whether more follow. */
export async function listComponents(db: Db, q: ComponentQuery, page: { first: number; after?: string | null }) {
  const rows = await db
    .select()
    .from(components)
    .where(and(componentWhere(q), page.after != null ? gt(components.id, page.after) : undefined))
    .orderBy(asc(components.id))
    .limit(page.first + 1);
  return { rows: rows.slice(0, page.first), hasNextPage: rows.length > page.first };
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

/** Which of these ids are components. */
export async function existingComponents(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.select({ id: components.id }).from(components).where(anyOf(components.id, ids));
  return new Set(rows.map((r) => r.id));
}
