/**
 * The rate limit shared by every API replica: the token buckets of rate-limit.ts, kept in PostgreSQL
 * (table rate_limits), without a database round trip per request.
 *
 * How: each replica decides locally from its copy of a bucket, and syncs its copies with the table in
 * batches: every `syncMs` (default 100 ms) one statement reports, for every bucket it used, how many
 * tokens it took, and reads back what is left of each (refilled by the database's clock, so replicas
 * whose clocks disagree still agree). A request waits for a sync (one batched round trip, shared by
 * every request waiting then) only when its bucket's copy is unknown or older than `freshMs` (default
 * 1 s), or this replica has taken a tenth of the burst from it since its last report. A caller within
 * its rate never waits after its first request; only one sending faster than a tenth of its burst per
 * sync interval (over 200 requests a second with the defaults) does, and that one is being limited.
 *
 * What it guarantees: all replicas together admit at most the burst plus the rate times the time,
 * plus at most a tenth of the burst per replica per sync round (what each admits from its copy before
 * reporting). Any excess is recorded as a debt (negative tokens, at most one burst) that the caller
 * pays back before it is admitted again. A lease of tokens from the table would never overshoot, but
 * it needs a round trip whenever a lease runs out, and small leases (so as not to strand tokens on idle
 * replicas) mean a round trip per request for callers that send a few requests each, which is every
 * node reporter.
 *
 * When the database cannot be reached, each replica goes on deciding from its own copies (per-process
 * limiting, as before) and reports what was used once it is back.
 */
import type { Logger } from 'pino';
import { BucketTable, rateKey, type BucketShape, type RateLimiter, type RateLimiterOptions, type RateSubject } from './rate-limit.ts';

export interface BucketUse {
  key: string;
  used: number;
  burst: number;
  perSecond: number;
}

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
  /** Longest a request waits for syncs before deciding from the local copy, ms (default 500). */
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
  /** Until when decisions are local only (the last sync failed). */
  let degradedUntil = 0;

  const maxKeys = opts.maxKeys ?? 100_000;
  /** Forget sync records of buckets the table has dropped (least recently used) and nothing to report. */
  const trim = () => {
    for (const [key, s] of syncs) if (!table.peek(key) && s.used === 0 && s.sending === 0) syncs.delete(key);
  };
  const pruner = setInterval(() => {
    trim();
    opts.store.prune?.().catch(() => {});
  }, opts.pruneMs ?? 60_000);
  pruner.unref();

  const schedule = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, syncMs);
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
      degradedUntil = t + freshMs;
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
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await flushOnce();
        } while ((again || wanted.size > 0) && !closed);
      } finally {
        running = undefined;
        if (dirty.size) schedule();
      }
    })();
    return running;
  }

  /** The sync record of a caller's bucket (created on first sight). */
  function recordOf(who: RateSubject): { key: string; s: Sync } {
    const key = rateKey(who);
    const shape = table.shapeOf(who);
    let s = syncs.get(key);
    if (!s || s.shape !== shape) {
      if (!s && syncs.size >= maxKeys + maxKeys / 10) trim();
      s = { used: s?.used ?? 0, sending: s?.sending ?? 0, syncedAt: s?.syncedAt ?? 0, shape };
      syncs.set(key, s);
    }
    return { key, s };
  }

  /** Wait for one batched sync that includes `key`, or until `deadline` (ms, table clock); false when late. */
  async function syncRound(key: string, deadline: number): Promise<boolean> {
    wanted.add(key);
    const done = new Promise<void>((resolve) => waiters.push(resolve));
    void flush();
    let timeout: NodeJS.Timeout | undefined;
    const wait = Math.max(0, deadline - table.now());
    const late = await Promise.race([
      done.then(() => false),
      new Promise<boolean>((resolve) => {
        timeout = setTimeout(() => resolve(true), wait);
      }),
    ]);
    clearTimeout(timeout);
    return !late;
  }

  /**
   * Decide with a fresh enough copy: `fn` runs synchronously right after the check, so requests that
   * waited for the same sync take their turns one by one. At most `waitMs` of waiting in all; past it
   * (a slow database) the local copy decides.
   */
  async function decide<T>(who: RateSubject, fn: (key: string, s: Sync) => T): Promise<T> {
    const { key, s } = recordOf(who);
    const deadline = table.now() + waitMs;
    while (needsSync(s)) {
      if (!(await syncRound(key, deadline))) break;
    }
    return fn(key, s);
  }

  /**
   * Whether a copy must be synced before deciding: never synced or stale, or this replica has taken
   * a tenth of the burst from it since its last report (so that N replicas flooded at once overshoot
   * by at most N tenths of a burst, not N bursts). Not while the database is unreachable.
   */
  function needsSync(s: Sync): boolean {
    const t = table.now();
    if (closed || t < degradedUntil) return false;
    return t - s.syncedAt > freshMs || s.used >= Math.max(1, Math.ceil(s.shape.burst / 10));
  }

  return {
    take: (who, cost = 1) =>
      decide(who, (key, s) => {
        const r = table.take(who, cost);
        if (r.ok) {
          s.used += cost;
          dirty.add(key);
          schedule();
        }
        return r;
      }),
    check: (who) => decide(who, () => table.check(who)),
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
