/**
 * Tenancy (reference §2.1). BOS asks TAPMS for a tenant's xnames; bootorch keeps them in tenant_xnames.
 * A tenant restricts which components are visible; it never owns components.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../client.ts';

/** A tenant is known when it owns at least one xname (BOS: TAPMS answers 404 otherwise). */
export async function tenantExists(db: Database, tenant: string): Promise<boolean> {
  const r = await db.execute(sql`select exists(select 1 from tenant_xnames where tenant = ${tenant}) as found`);
  return Boolean((r.rows[0] as { found: boolean } | undefined)?.found);
}

/** SQL condition: `idColumn` is one of the tenant's xnames; always true without a tenant. */
export function visibleTo(tenant: string | null, idColumn: SQL | SQL.Aliased | unknown): SQL {
  if (tenant === null) return sql`true`;
  return sql`exists (select 1 from tenant_xnames tx where tx.tenant = ${tenant} and tx.xname = ${idColumn})`;
}

/** The subset of `ids` the tenant may see (all of them without a tenant). */
export async function visibleIds(db: Database, tenant: string | null, ids: readonly string[]): Promise<Set<string>> {
  if (tenant === null || ids.length === 0) return new Set(ids);
  const r = await db.execute(sql`select xname from tenant_xnames where tenant = ${tenant} and xname = any(${sql.param([...ids])}::text[])`);
  return new Set((r.rows as { xname: string }[]).map((x) => x.xname));
}
