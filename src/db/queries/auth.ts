/**
 * The auth module's SQL (src/auth has none): `api_tokens` and the tenant administration of
 * `tenant_xnames`. Each function takes a `Db` (pool or open transaction).
 */
import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { apiTokens, tenantXnames } from '../schema.ts';

export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type NewApiTokenRow = typeof apiTokens.$inferInsert;

export async function insertApiToken(db: Db, row: NewApiTokenRow): Promise<ApiTokenRow> {
  const [stored] = await db.insert(apiTokens).values(row).returning();
  return stored!;
}

/** Insert unless the id exists; returns the row now stored under that id either way. */
export async function insertApiTokenIfAbsent(db: Db, row: NewApiTokenRow): Promise<ApiTokenRow> {
  await db.insert(apiTokens).values(row).onConflictDoNothing({ target: apiTokens.id });
  return (await findApiToken(db, row.id))!;
}

export async function findApiToken(db: Db, id: string): Promise<ApiTokenRow | undefined> {
  const [row] = await db.select().from(apiTokens).where(eq(apiTokens.id, id)).limit(1);
  return row;
}

/** Sets revoked_at on a live token; a token already revoked keeps its first revocation time. */
export async function revokeApiTokenRow(db: Db, id: string, at: Date): Promise<boolean> {
  const rows = await db.update(apiTokens).set({ revokedAt: at })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt))).returning({ id: apiTokens.id });
  return rows.length > 0;
}

/** Revokes every live token of one role and subject (a node's earlier credentials); returns their ids. */
export async function revokeApiTokensOf(db: Db, role: string, subject: string, at: Date): Promise<string[]> {
  const rows = await db.update(apiTokens).set({ revokedAt: at })
    .where(and(eq(apiTokens.role, role), eq(apiTokens.subject, subject), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  return rows.map((r) => r.id);
}

export async function listApiTokenRows(db: Db, opts: { includeRevoked: boolean }): Promise<ApiTokenRow[]> {
  return db.select().from(apiTokens)
    .where(opts.includeRevoked ? undefined : isNull(apiTokens.revokedAt))
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id));
}

export async function selectTenantXnames(db: Db, tenant: string): Promise<string[]> {
  const rows = await db.select({ xname: tenantXnames.xname }).from(tenantXnames)
    .where(eq(tenantXnames.tenant, tenant));
  return rows.map((r) => r.xname);
}

export interface TenantRow {
  tenant: string;
  xnames: string[];
}

/** Every tenant with its xnames (sorted), by name. */
export async function listTenants(db: Db): Promise<TenantRow[]> {
  const rows = await db.select({ tenant: tenantXnames.tenant, xname: tenantXnames.xname }).from(tenantXnames)
    .orderBy(asc(tenantXnames.tenant), asc(tenantXnames.xname));
  const out = new Map<string, string[]>();
  for (const r of rows) (out.get(r.tenant) ?? out.set(r.tenant, []).get(r.tenant)!).push(r.xname);
  return [...out].map(([tenant, xnames]) => ({ tenant, xnames }));
}

/**
 * Make `xnames` the tenant's whole set, in the caller's transaction. An xname belongs to at most one
 * tenant: when another tenant owns some of them nothing is written and those are returned. The table
 * lock serialises concurrent tenant changes so that the check and the write see the same owners.
 * A repeated call with the same set changes nothing.
 */
export async function replaceTenantXnames(
  db: Db, tenant: string, xnames: readonly string[],
): Promise<{ ok: true } | { ok: false; taken: { xname: string; tenant: string }[] }> {
  await db.execute(sql`lock table tenant_xnames in share row exclusive mode`);
  const taken = xnames.length === 0 ? [] : await db.select({ xname: tenantXnames.xname, tenant: tenantXnames.tenant })
    .from(tenantXnames).where(and(inArray(tenantXnames.xname, [...xnames]), ne(tenantXnames.tenant, tenant)))
    .orderBy(asc(tenantXnames.xname));
  if (taken.length) return { ok: false, taken };
  await db.delete(tenantXnames).where(eq(tenantXnames.tenant, tenant));
  if (xnames.length) await db.insert(tenantXnames).values(xnames.map((xname) => ({ tenant, xname })));
  return { ok: true };
}

/** Remove the tenant (all its xnames); false when it owned none. Its templates and sessions stay, as in BOS. */
export async function deleteTenantXnames(db: Db, tenant: string): Promise<boolean> {
  const rows = await db.delete(tenantXnames).where(eq(tenantXnames.tenant, tenant)).returning({ x: tenantXnames.xname });
  return rows.length > 0;
}
