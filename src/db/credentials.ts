/**
 * SQL of the credential watch (src/api/credential-watch.ts): the channel on which the end of an API
 * token is announced (a trigger on api_tokens, migration 0002, so every path that revokes, expires or
 * deletes a token announces it), and the check of tracked tokens after a missed notification.
 */
import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { arrayParam } from './sql.ts';

/** NOTIFY channel; the payload is the token id. */
export const CREDENTIALS_CHANNEL = 'bootorch_credentials';

export interface EndedToken {
  id: string;
  why: 'revoked' | 'expired' | 'deleted';
  /** When it was revoked or expired (null: deleted). */
  at: Date | null;
}

/** Which of these token ids are no longer live (revoked, expired, or gone), as the database sees them now. */
export async function endedTokens(db: Db, ids: readonly string[]): Promise<EndedToken[]> {
  if (ids.length === 0) return [];
  // drizzle's driver hands timestamps of raw SQL back as text: turned into Dates here.
  const r = await db.execute<{ id: string; revoked_at: string | null; expires_at: string | null; gone: boolean }>(sql`
    select i.id, t.revoked_at, t.expires_at, t.id is null as gone
      from unnest(${arrayParam(ids, 'text')}) as i(id) left join api_tokens t on t.id = i.id
     where t.id is null or t.revoked_at is not null or t.expires_at <= now()`);
  return r.rows.map((x) =>
    x.gone
      ? { id: x.id, why: 'deleted' as const, at: null }
      : x.revoked_at
        ? { id: x.id, why: 'revoked' as const, at: new Date(x.revoked_at) }
        : { id: x.id, why: 'expired' as const, at: x.expires_at === null ? null : new Date(x.expires_at) },
  );
}
