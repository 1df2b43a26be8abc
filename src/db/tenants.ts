/**
 * Tenancy (reference §2.1): `tenant_xnames`. BOS asks TAPMS for a tenant's xnames; bootorch keeps them
 * here. A tenant restricts which components are visible; it never owns components.
 */
import { and, asc, eq, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from './client.ts';
import { anyOf, insertInChunks } from './sql.ts';
import { tenantXnames as tenantXnamesTable } from './schema.ts';

/** A tenant is known when it owns at least one xname (BOS: TAPMS answers 404 otherwise). */
export async function tenantExists(db: Db, tenant: string): Promise<boolean> {
  const rows = await db
    .select({ xname: tenantXnamesTable.xname })
    .from(tenantXnamesTable)
    .where(eq(tenantXnamesTable.tenant, tenant))
    .limit(1);
  return rows.length > 0;
}

/** SQL condition: `idColumn` is one of the tenant's xnames; always true without a tenant. */
export function visibleTo(tenant: string | null, idColumn: SQL | SQL.Aliased | unknown): SQL {
  if (tenant === null) return sql`true`;
  return sql`exists (select 1 from tenant_xnames tx where tx.tenant = ${tenant} and tx.xname = ${idColumn})`;
}

/** The subset of `ids` the tenant may see (all of them without a tenant). */
export async function visibleIds(db: Db, tenant: string | null, ids: readonly string[]): Promise<Set<string>> {
  if (tenant === null || ids.length === 0) return new Set(ids);
  const rows = await db
    .select({ xname: tenantXnamesTable.xname })
    .from(tenantXnamesTable)
    .where(and(eq(tenantXnamesTable.tenant, tenant), anyOf(tenantXnamesTable.xname, ids)));
  return new Set(rows.map((x) => x.xname));
}

/** The xnames a tenant owns (bootorch's stand-in for TAPMS `status.tenantresources[].xnames`). */
export async function tenantXnames(db: Db, tenant: string): Promise<Set<string>> {
  const rows = await db.select({ xname: tenantXnamesTable.xname }).from(tenantXnamesTable).where(eq(tenantXnamesTable.tenant, tenant));
  return new Set(rows.map((r) => r.xname));
}

export interface TenantRow {
  tenant: string;
  xnames: string[];
}

/** Every tenant with its xnames (sorted), by name. */
export async function listTenants(db: Db): Promise<TenantRow[]> {
  const rows = await db
    .select({ tenant: tenantXnamesTable.tenant, xname: tenantXnamesTable.xname })
    .from(tenantXnamesTable)
    .orderBy(asc(tenantXnamesTable.tenant), asc(tenantXnamesTable.xname));
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
  db: Db,
  tenant: string,
  xnames: readonly string[],
): Promise<{ ok: true } | { ok: false; taken: { xname: string; tenant: string }[] }> {
  await db.execute(sql`lock table tenant_xnames in share row exclusive mode`);
  const taken =
    xnames.length === 0
      ? []
      : await db
          .select({ xname: tenantXnamesTable.xname, tenant: tenantXnamesTable.tenant })
          .from(tenantXnamesTable)
          .where(and(anyOf(tenantXnamesTable.xname, xnames), ne(tenantXnamesTable.tenant, tenant)))
          .orderBy(asc(tenantXnamesTable.xname));
  if (taken.length) return { ok: false, taken };
  await db.delete(tenantXnamesTable).where(eq(tenantXnamesTable.tenant, tenant));
  await insertInChunks(db, xnames, async (tx, part) => {
    await tx.insert(tenantXnamesTable).values(part.map((xname) => ({ tenant, xname })));
  });
  return { ok: true };
}

/** Remove the tenant (all its xnames); false when it owned none. Its templates and sessions stay, as in BOS. */
export async function deleteTenantXnames(db: Db, tenant: string): Promise<boolean> {
  const rows = await db.delete(tenantXnamesTable).where(eq(tenantXnamesTable.tenant, tenant)).returning({ x: tenantXnamesTable.xname });
  return rows.length > 0;
}
