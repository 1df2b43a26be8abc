/**
 * The rate limit shared by every API replica: the token buckets of rate-limit.ts, kept in PostgreSQL
 * (table rate_limits), without a database round trip per request.
 *
 * How: each replica decides locally from its copy of a bucket, and syncs its copies with the table in
 * batches: every `syncMs` (default 100 ms) one statement reports, for every bucket it used, how many
 * tokens it took, and reads back what is left of each (refilled by the database's clock, so replicas
 * whose clocks disagree still agree). A copy older than `freshMs` (default 1 s), or a bucket this
 * replica has not seen, is synced before the request is decided: the first request of an idle caller
 * waits for one batched round trip, a busy caller's requests never do.
 *
 * What it guarantees: over any stretch of time, all replicas together admit at most the burst plus the
 * rate times the time, plus what the other replicas admitted from their copies within one sync
 * interval. That excess is recorded as a debt (negative tokens, at most one burst) that the caller
 * pays back before it is admitted again, so a caller flooding every replica at once gets at most one
 * interval's worth more, once. A lease of tokens from the table would never overshoot, but it needs a
 * round trip whenever a lease runs out, and small leases (to not strand tokens on idle replicas) mean
 * a round trip per request for callers that send a few requests each, which is every node reporter.
 *
 * When the database cannot be reached, each replica goes on deciding from its own copies (per-process
 * limiting, as before) and reports what was used once it is back.
 */
import type { Logger } from 'pino';
import { BucketTable, rateKey, type BucketShape, type RateLimiter, type RateLimiterOptions, type RateLimitResult, type RateSubject } from './rate-limit.ts';

export interface BucketUse { key: string; used: number; burst: number; perSecond: number }

/** Where the buckets are kept (src/db/rate-limits.ts over a pool). */
export interface RateLimitStore {
  /** Report what was used of each bucket; answers the tokens left in each (may be negative: a debt). */
  sync(uses: readonly BucketUse[]): Promise<Map<string, number>>;
  /** Drop buckets that have refilled completely. */
  prune?(): Promise<number>;
}

export interface SharedRateLimiterOptions extends RateLimiterOptions {
  store: RateLimitStore;
  /** Longest time between reporting a used bucket and the table, ms (default 100). */
  syncMs?: number;
  /** A copy synced longer ago than this is synced again before deciding, ms (default 1000). */
  freshMs?: number;
  /** Longest a request waits for a sync before deciding from the local copy, ms (default 500). */
  waitMs?: number;
  /** How often full buckets are removed from the table, ms (default 60000). */
  pruneMs?: number;
  logger?: Logger;
}

interface Sync {
  /** Tokens taken since the last report. */
  used: number;
  /** Tokens in the report on its way. */
  sending: number;
  /** Local clock (ms) of the last answer; 0: never synced. */
  syncedAt: number;
  shape: BucketShape;
}

export interface SharedRateLimiter extends RateLimiter {
  /** Sync now (tests; shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createSharedRateLimiter(opts: SharedRateLimiterOptions): SharedRateLimiter {
  const table = new BucketTable(opts);
  const syncMs = opts.syncMs ?? 100;
  const freshMs = opts.freshMs ?? 1000;
  const waitMs = opts.waitMs ?? 500;
  const syncs = new Map<string, Sync>();
  const dirty = new Set<string>();
  const wanted = new Set<string>();
  let waiters: (() => void)[] = [];
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let lastWarn = 0;

  const maxKeys = opts.maxKeys ?? 100_000;
  /** Forget sync records of buckets the table has dropped (least recently used) and nothing to report. */
  const trim = () => {
    for (const [key, s] of syncs) if (!table.peek(key) && s.used === 0 && s.sending === 0) syncs.delete(key);
  };
  const pruner = setInterval(() => { trim(); opts.store.prune?.().catch(() => {}); }, opts.pruneMs ?? 60_000);
  pruner.unref();

  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(() => { timer = undefined; void flush(); }, syncMs);
    timer.unref();
  };

  async function flushOnce(): Promise<void> {
    const keys = [...new Set([...dirty, ...wanted])];
    dirty.clear();
    wanted.clear();
    const batch = waiters;
    waiters = [];
    const uses: BucketUse[] = [];
    for (const key of keys) {
      const s = syncs.get(key);
      if (!s) continue;
      s.sending = s.used;
      s.used = 0;
      uses.push({ key, used: s.sending, burst: s.shape.burst, perSecond: s.shape.perSecond });
    }
    try {
      const left = await opts.store.sync(uses);
      const t = table.now();
      for (const u of uses) {
        const s = syncs.get(u.key);
        const tokens = left.get(u.key);
        if (!s || tokens === undefined) continue;
        const b = table.touch(u.key, s.shape);
        // What the table says, less what this replica took while the answer was on its way.
        b.tokens = Math.min(s.shape.burst, tokens - s.used);
        b.at = t;
        s.sending = 0;
        s.syncedAt = t;
      }
    } catch (e) {
      const t = table.now();
      for (const u of uses) {
        const s = syncs.get(u.key);
        if (!s) continue;
        s.used += s.sending; // reported next time
        s.sending = 0;
        s.syncedAt = t; // decide from the local copy meanwhile
        if (s.used > 0) dirty.add(u.key);
      }
      if (t - lastWarn > 10_000) {
        lastWarn = t;
        opts.logger?.warn({ err: (e as Error).message }, 'rate limit: cannot sync with the database; limiting per process meanwhile');
      }
    } finally {
      for (const w of batch) w();
    }
  }

  /** Run syncs until nothing is wanted; one at a time. */
  function flush(): Promise<void> {
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        do { again = false; await flushOnce(); } while ((again || wanted.size > 0) && !closed);
      } finally {
        running = undefined;
        if (dirty.size) schedule();
      }
    })();
    return running;
  }

  /** Make sure the local copy of `key` is fresh (one batched sync), waiting at most waitMs. */
  async function fresh(who: RateSubject): Promise<string> {
    const key = rateKey(who);
    const shape = table.shapeOf(who);
    let s = syncs.get(key);
    if (!s || s.shape !== shape) {
      if (!s && syncs.size >= maxKeys + maxKeys / 10) trim();
      s = { used: s?.used ?? 0, sending: s?.sending ?? 0, syncedAt: s?.syncedAt ?? 0, shape };
      syncs.set(key, s);
    }
    if (closed || table.now() - s.syncedAt <= freshMs) return key;
    wanted.add(key);
    const done = new Promise<void>((resolve) => waiters.push(resolve));
    void flush();
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise<void>((resolve) => { timeout = setTimeout(resolve, waitMs); })]);
    clearTimeout(timeout);
    return key;
  }

  return {
    async take(who, cost = 1): Promise<RateLimitResult> {
      const key = await fresh(who);
      const r = table.take(who, cost);
      if (r.ok) {
        const s = syncs.get(key);
        if (s) { s.used += cost; dirty.add(key); schedule(); }
      }
      return r;
    },
    async check(who): Promise<RateLimitResult> {
      await fresh(who);
      return table.check(who);
    },
    size: () => table.size,
    flush,
    async close() {
      if (closed) return;
      clearInterval(pruner);
      clearTimeout(timer);
      timer = undefined;
      // Report what was used, so the other replicas count it.
      if (dirty.size) await Promise.race([flush(), new Promise((r) => setTimeout(r, 1000).unref())]).catch(() => {});
      closed = true;
    },
  };
}
