/**
 * SQL of the shared rate limit (src/auth/shared-rate-limit.ts): one statement reports what a replica
 * used of many buckets and reads back what is left of each, refilled to the database's clock.
 */
import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { arrayParam } from './sql.ts';

export interface BucketUse {
  key: string;
  /** Tokens this replica took since its last report. */
  used: number;
  burst: number;
  perSecond: number;
}

/**
 * Apply every bucket's use and return its tokens left (at most the burst; at least minus the burst: a
 * debt, when replicas together admitted more than was left). Keys are written in sorted order, so two
 * replicas syncing overlapping keys take the row locks in the same order and cannot deadlock.
 */
export async function syncBuckets(db: Db, uses: readonly BucketUse[]): Promise<Map<string, number>> {
  if (uses.length === 0) return new Map();
  const sorted = [...uses].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const r = await db.execute<{ key: string; tokens: number }>(sql`insert into rate_limits as b (key, tokens, burst, per_second, at)
    select k, greatest(-u.burst, u.burst - u.used), u.burst, u.per_second, now()
      from unnest(${arrayParam(
        sorted.map((u) => u.key),
        'text',
      )}, ${arrayParam(
        sorted.map((u) => u.used),
        'float8',
      )},
        ${arrayParam(
          sorted.map((u) => u.burst),
          'float8',
        )}, ${arrayParam(
          sorted.map((u) => u.perSecond),
          'float8',
        )})
        with ordinality as u(k, used, burst, per_second, n)
      order by u.n
    on conflict (key) do update set
      tokens = greatest(-excluded.burst, least(excluded.burst,
        b.tokens + excluded.per_second * greatest(0, extract(epoch from excluded.at - b.at)::float8)) - (excluded.burst - excluded.tokens)),
      burst = excluded.burst, per_second = excluded.per_second, at = excluded.at
    returning key, tokens`);
  return new Map(r.rows.map((x) => [x.key, Number(x.tokens)]));
}

/** Remove buckets that have refilled completely (a missing bucket reads as full). Returns how many. */
export async function pruneBuckets(db: Db): Promise<number> {
  const r = await db.execute(sql`delete from rate_limits
    where at + make_interval(secs => greatest(0, burst - tokens) / per_second) < now()`);
  return r.rowCount ?? 0;
}
