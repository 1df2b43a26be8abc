/**
 * Component reads. Lists are keyset-paged on id (`id > after order by id limit n`), so any page costs
 * what the first does however many rows there are; filters use the components table's indexes.
 */
import { and, asc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { components, type ComponentRow } from '../schema.ts';
import { visibleTo } from './tenants.ts';

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
    q.ids ? sql`${components.id} = any(${sql.param([...q.ids])}::text[])` : undefined,
    q.session != null ? eq(components.session, q.session) : undefined,
    q.stagedSession != null ? eq(components.stagedSession, q.stagedSession) : undefined,
    q.enabled != null ? eq(components.enabled, q.enabled) : undefined,
    q.phase != null ? eq(components.phase, q.phase) : undefined,
    q.status ? sql`${components.status} = any(${sql.param([...q.status])}::text[])` : undefined,
    q.tenant !== null ? visibleTo(q.tenant, components.id) : undefined,
  );
}

/** One page: up to `first` rows with id > after, plus whether more follow. */
export async function listComponents(db: Database, q: ComponentQuery, page: { first: number; after?: string | null }) {
  const rows = await db.select().from(components)
    .where(and(componentWhere(q), page.after != null ? gt(components.id, page.after) : undefined))
    .orderBy(asc(components.id))
    .limit(page.first + 1);
  return { rows: rows.slice(0, page.first), hasNextPage: rows.length > page.first };
}

export async function countComponents(db: Database, q: ComponentQuery): Promise<number> {
  const [r] = await db.select({ n: sql<number>`count(*)::int` }).from(components).where(componentWhere(q));
  return r?.n ?? 0;
}

export async function getComponent(db: Database, id: string, tenant: string | null): Promise<ComponentRow | null> {
  const rows = await db.select().from(components).where(and(eq(components.id, id), visibleTo(tenant, components.id)));
  return rows[0] ?? null;
}

/** Lock and read these components (sorted by id, so concurrent bulk writers lock in one order). */
export async function lockComponents(db: Database, ids: readonly string[]): Promise<ComponentRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(components)
    .where(sql`${components.id} = any(${sql.param([...ids])}::text[])`)
    .orderBy(asc(components.id))
    .for('update');
}

/** Read these components (no lock). */
export async function readComponents(db: Database, ids: readonly string[]): Promise<ComponentRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(components).where(sql`${components.id} = any(${sql.param([...ids])}::text[])`);
}

/** Ids of the components a session filter selects (locked, for a bulk patch). */
export async function lockSessionComponents(db: Database, session: string, tenant: string | null): Promise<string[]> {
  const rows = await db.select({ id: components.id }).from(components)
    .where(and(eq(components.session, session), visibleTo(tenant, components.id)))
    .orderBy(asc(components.id))
    .for('update');
  return rows.map((r) => r.id);
}

export async function deleteComponent(db: Database, id: string, tenant: string | null): Promise<ComponentRow | null> {
  const rows = await db.delete(components).where(and(eq(components.id, id), visibleTo(tenant, components.id))).returning();
  return rows[0] ?? null;
}

/** The boot artifacts bootorch recorded for these BSS tokens (BOS's DB 4). */
export async function artifactsForTokens(db: Database, tokens: readonly string[]) {
  const out = new Map<string, { kernel: string; kernelParameters: string; initrd: string }>();
  if (tokens.length === 0) return out;
  const r = await db.execute(sql`select token, kernel, kernel_parameters, initrd from boot_artifacts
    where token = any(${sql.param([...new Set(tokens)])}::text[])`);
  for (const x of r.rows as { token: string; kernel: string; kernel_parameters: string; initrd: string }[]) {
    out.set(x.token, { kernel: x.kernel, kernelParameters: x.kernel_parameters, initrd: x.initrd });
  }
  return out;
}
