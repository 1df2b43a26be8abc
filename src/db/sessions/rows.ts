/** Session rows: one per (tenant, name); '' is the untenanted namespace. Deleting one drops its snapshot. */
import { and, asc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { sessions, sessionStatusSnapshots, type SessionRow } from '../schema.ts';
import { ageSeconds } from '../../domain/age.ts';
import { anyOf, arrayParam, unnestAs } from '../sql.ts';
import type { SessionStateName } from '../../domain/sessions.ts';

export interface SessionKey {
  /** '' for an untenanted session. */
  tenantKey: string;
  name: string;
}

export interface SessionFilter {
  /** null: every tenant (list only). */
  tenant: string | null;
  status?: SessionStateName | null;
  /** Started at least this long ago (BOS age string). */
  minAge?: string | null;
  /** Started at most this long ago. */
  maxAge?: string | null;
}

function where(f: SessionFilter): SQL | undefined {
  // Ages count back from the database's time: start times are its stamps.
  const ago = (age: string) => sql`now() - make_interval(secs => ${ageSeconds(age)})`;
  return and(
    f.tenant === null ? undefined : eq(sessions.tenantKey, f.tenant),
    f.status ? eq(sessions.status, f.status) : undefined,
    f.minAge ? lte(sessions.startTime, ago(f.minAge)) : undefined,
    f.maxAge ? gte(sessions.startTime, ago(f.maxAge)) : undefined,
  );
}

export async function listSessions(db: Db, f: SessionFilter): Promise<SessionRow[]> {
  return db.select().from(sessions).where(where(f)).orderBy(asc(sessions.startTime), asc(sessions.name));
}

export async function getSession(db: Db, tenantKey: string, name: string): Promise<SessionRow | null> {
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantKey, tenantKey), eq(sessions.name, name)));
  return rows[0] ?? null;
}

/** Sessions by name within one tenant namespace. */
export async function getSessionsByName(db: Db, tenantKey: string, names: readonly string[]): Promise<Map<string, SessionRow>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantKey, tenantKey), anyOf(sessions.name, names)));
  return new Map(rows.map((r) => [r.name, r]));
}

/** Insert a new session; null when the name is already taken in its tenant. */
export async function insertSession(db: Db, row: typeof sessions.$inferInsert): Promise<SessionRow | null> {
  const rows = await db.insert(sessions).values(row).onConflictDoNothing().returning();
  return rows[0] ?? null;
}

export async function deleteSession(db: Db, tenantKey: string, name: string): Promise<boolean> {
  const rows = await db
    .delete(sessions)
    .where(and(eq(sessions.tenantKey, tenantKey), eq(sessions.name, name)))
    .returning({ tenantKey: sessions.tenantKey, name: sessions.name });
  await deleteSnapshots(db, rows);
  return rows.length > 0;
}

/** Delete every matching session of one tenant namespace (BOS uses the request's tenant key). */
export async function deleteSessions(db: Db, f: SessionFilter & { tenant: string }): Promise<string[]> {
  const rows = await db.delete(sessions).where(where(f)).returning({ tenantKey: sessions.tenantKey, name: sessions.name });
  await deleteSnapshots(db, rows);
  return rows.map((r) => r.name).sort();
}

/** A deleted session takes its saved status with it (every delete path calls this). */
export async function deleteSnapshots(db: Db, keys: ReadonlyArray<{ tenantKey: string; name: string }>): Promise<void> {
  if (keys.length === 0) return;
  const u = unnestAs('u', {
    t: arrayParam(
      keys.map((k) => k.tenantKey),
      'text',
    ),
    n: arrayParam(
      keys.map((k) => k.name),
      'text',
    ),
  });
  await db
    .delete(sessionStatusSnapshots)
    .where(sql`(${sessionStatusSnapshots.tenantKey}, ${sessionStatusSnapshots.name}) in (select t, n from ${u})`);
}
