/** `api_tokens`: locally issued API and node tokens, stored hashed (src/auth has no SQL). */
import { and, asc, eq, isNull } from 'drizzle-orm';
import type { Db } from './client.ts';
import { apiTokens } from './schema.ts';
import { anyOf, ROWS_PER_INSERT } from './sql.ts';

export type ApiTokenRow = typeof apiTokens.$inferSelect;
export type NewApiTokenRow = typeof apiTokens.$inferInsert;

export async function insertApiToken(db: Db, row: NewApiTokenRow): Promise<ApiTokenRow> {
  const [stored] = await db.insert(apiTokens).values(row).returning();
  return stored!;
}

/**
 * Many rows in one statement (at most ROWS_PER_INSERT: the caller chunks, and holds the transaction).
 * Returns nothing: the caller already has every value it inserted.
 */
export async function insertApiTokens(db: Db, rows: readonly NewApiTokenRow[]): Promise<void> {
  if (rows.length > ROWS_PER_INSERT) throw new RangeError(`insertApiTokens: ${rows.length} rows, at most ${ROWS_PER_INSERT} per statement`);
  if (rows.length) await db.insert(apiTokens).values([...rows]);
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

/**
 * Revokes every live node token of these subjects (of one scope when given) in one statement; returns
 * their ids. The partial index api_tokens_live_node_idx finds them without reading revoked rows.
 */
export async function revokeNodeTokensOf(db: Db, subjects: readonly string[], at: Date, scope?: string): Promise<string[]> {
  if (subjects.length === 0) return [];
  const rows = await db
    .update(apiTokens)
    .set({ revokedAt: at })
    .where(
      and(
        eq(apiTokens.role, 'node'),
        anyOf(apiTokens.subject, subjects),
        isNull(apiTokens.revokedAt),
        scope === undefined ? undefined : eq(apiTokens.scope, scope),
      ),
    )
    .returning({ id: apiTokens.id });
  return rows.map((r) => r.id);
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
