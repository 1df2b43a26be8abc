/**
 * SQL of the shared rate limit (src/auth/shared-rate-limit.ts): one statement reports what a replica
 * used of many buckets and reads back what is left of each, refilled to the database's clock.
 */
import type { Queryable } from './queryable.ts';

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
export async function syncBuckets(q: Queryable, uses: readonly BucketUse[]): Promise<Map<string, number>> {
  if (uses.length === 0) return new Map();
  const sorted = [...uses].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const r = await q.query(`insert into rate_limits as b (key, tokens, burst, per_second, at)
    select k, greatest(-u.burst, u.burst - u.used), u.burst, u.per_second, now()
      from unnest($1::text[], $2::float8[], $3::float8[], $4::float8[]) with ordinality as u(k, used, burst, per_second, n)
      order by u.n
    on conflict (key) do update set
      tokens = greatest(-excluded.burst, least(excluded.burst,
        b.tokens + excluded.per_second * greatest(0, extract(epoch from excluded.at - b.at)::float8)) - (excluded.burst - excluded.tokens)),
      burst = excluded.burst, per_second = excluded.per_second, at = excluded.at
    returning key, tokens`,
  [sorted.map((u) => u.key), sorted.map((u) => u.used), sorted.map((u) => u.burst), sorted.map((u) => u.perSecond)]);
  return new Map(r.rows.map((x: { key: string; tokens: number }) => [x.key, Number(x.tokens)]));
}

/** Remove buckets that have refilled completely (a missing bucket reads as full). Returns how many. */
export async function pruneBuckets(q: Queryable): Promise<number> {
  const r = await q.query(`delete from rate_limits
    where at + make_interval(secs => greatest(0, burst - tokens) / per_second) < now()`);
  return r.rowCount ?? 0;
}
