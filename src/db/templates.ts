/** Session template rows: one per (tenant, name); '' is the untenanted namespace. */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { sessionTemplates, type TemplateRow } from './schema.ts';
import type { BootSetRecord, TemplateRecord } from '../domain/templates.ts';
import { parseStoredRollout } from '../domain/rollout-policy.ts';

export interface StoredTemplate extends TemplateRecord {
  createdAt: Date;
  updatedAt: Date;
}

export function toTemplate(row: TemplateRow): StoredTemplate {
  return {
    name: row.name,
    tenant: row.tenant,
    description: row.description,
    enableCfs: row.enableCfs,
    cfs: row.cfsConfiguration ? { configuration: row.cfsConfiguration } : null,
    bootSets: row.bootSets as Record<string, BootSetRecord>,
    rollout: parseStoredRollout(row.rollout),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Without a tenant: every tenant's templates (BOS). With one: only that tenant's. */
export async function listTemplates(db: Db, tenant: string | null): Promise<StoredTemplate[]> {
  const rows = await db
    .select()
    .from(sessionTemplates)
    .where(tenant === null ? undefined : eq(sessionTemplates.tenantKey, tenant))
    .orderBy(asc(sessionTemplates.tenantKey), asc(sessionTemplates.name));
  return rows.map(toTemplate);
}

export async function getTemplate(
  db: Db,
  tenantKey: string,
  name: string,
  opts: { forUpdate?: boolean } = {},
): Promise<StoredTemplate | null> {
  const q = db
    .select()
    .from(sessionTemplates)
    .where(and(eq(sessionTemplates.tenantKey, tenantKey), eq(sessionTemplates.name, name)));
  const rows = opts.forUpdate ? await q.for('update') : await q;
  return rows[0] ? toTemplate(rows[0]) : null;
}

/** Create or replace; created_at survives a replace. */
export async function upsertTemplate(db: Db, tenantKey: string, t: TemplateRecord): Promise<StoredTemplate> {
  const values = {
    tenantKey,
    name: t.name,
    tenant: t.tenant,
    description: t.description,
    enableCfs: t.enableCfs,
    cfsConfiguration: t.cfs?.configuration ?? null,
    bootSets: t.bootSets as Record<string, unknown>,
    rollout: t.rollout as Record<string, unknown> | null,
    updatedAt: sql`now()`,
  };
  const { tenantKey: _k, name: _n, ...update } = values;
  const [row] = await db
    .insert(sessionTemplates)
    .values(values)
    .onConflictDoUpdate({ target: [sessionTemplates.tenantKey, sessionTemplates.name], set: update })
    .returning();
  return toTemplate(row!);
}

export async function deleteTemplate(db: Db, tenantKey: string, name: string): Promise<boolean> {
  const rows = await db
    .delete(sessionTemplates)
    .where(and(eq(sessionTemplates.tenantKey, tenantKey), eq(sessionTemplates.name, name)))
    .returning({ name: sessionTemplates.name });
  return rows.length > 0;
}
