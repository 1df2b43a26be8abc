/** `api_tokens`: locally issued API and node tokens, stored hashed (src/auth has no SQL). */
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { apiTokens } from './schema.ts';
import { anyOf, arrayParam } from './sql.ts';

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
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: at })
    .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  return rows.length > 0;
}

/**
 * Revokes every live token of one role and subject (a node's earlier credentials), or only those of
 * one node scope; returns their ids.
 */
export async function revokeApiTokensOf(db: Db, role: string, subject: string, at: Date, scope?: string): Promise<string[]> {
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: at })
    .where(
      and(
        eq(apiTokens.role, role),
        eq(apiTokens.subject, subject),
        isNull(apiTokens.revokedAt),
        scope === undefined ? undefined : eq(apiTokens.scope, scope),
      ),
    )
    .returning({ id: apiTokens.id });
  return rows.map((r) => r.id);
}

/** New node tokens, one per subject, all with the same expiry, creation time and scope. */
export interface NewNodeTokens {
  ids: readonly string[];
  hashes: readonly string[];
  subjects: readonly string[];
  expiresAt: Date | null;
  createdAt: Date;
  scope: string | null;
}

/**
 * Inserts these node tokens and, with `revokeAt`, revokes every earlier live node token of their
 * subjects (only those of `scope` when it is set) in the same statement, so a subject never has zero
 * or two live tokens; returns the revoked ids. One statement however many rows: each column is one
 * array parameter (unnest). The revocation does not see the rows it inserts (one snapshot), and the
 * partial index api_tokens_live_node_idx finds the earlier ones without reading revoked rows.
 */
export async function issueNodeTokenRows(db: Db, t: NewNodeTokens, revokeAt?: Date): Promise<string[]> {
  if (t.ids.length === 0) return [];
  const insert = sql`insert into ${apiTokens} (id, hash, role, subject, expires_at, created_at, scope)
    select id, hash, 'node', subject, ${t.expiresAt}::timestamptz, ${t.createdAt}::timestamptz, ${t.scope}::text
      from unnest(${arrayParam(t.ids, 'text')}, ${arrayParam(t.hashes, 'text')}, ${arrayParam(t.subjects, 'text')}) as u(id, hash, subject)`;
  if (!revokeAt) {
    await db.execute(insert);
    return [];
  }
  const r = await db.execute<{ id: string }>(sql`with revoked as (
      update ${apiTokens} set revoked_at = ${revokeAt}::timestamptz
       where role = 'node' and subject = any(${arrayParam(t.subjects, 'text')}) and revoked_at is null
         ${t.scope === null ? sql`` : sql`and scope = ${t.scope}`}
      returning id),
    inserted as (${insert})
    select id from revoked`);
  return r.rows.map((x) => x.id);
}

export async function listApiTokenRows(db: Db, opts: { includeRevoked: boolean }): Promise<ApiTokenRow[]> {
  return db
    .select()
    .from(apiTokens)
    .where(opts.includeRevoked ? undefined : isNull(apiTokens.revokedAt))
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id));
}

/** The rows of these ids (any order; unknown ids are absent): one statement for a batch of lookups. */
export async function findApiTokens(db: Db, ids: readonly string[]): Promise<ApiTokenRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(apiTokens).where(anyOf(apiTokens.id, ids));
}
