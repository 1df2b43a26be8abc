/**
 * Rate limiting: a token bucket per caller. Two kinds of caller: a principal (keyed by subject, all its
 * tokens share one bucket) and a client address (requests without a credential, and failed
 * authentications), which gets a smaller bucket.
 *
 * `createRateLimiter` keeps the buckets in this process's memory: with N API replicas a caller gets up
 * to N times the rate. `createSharedRateLimiter` (shared-rate-limit.ts) puts the same buckets behind a
 * table in PostgreSQL, shared by every replica, without a database round trip per request.
 *
 * Why not rate-limiter-flexible: its memory store is a fixed window that reads Date.now() and arms
 * a timer per key, so tests would need fake timers instead of an injected clock, and a token
 * bucket (steady rate plus a burst) is the behaviour we want. This is the whole algorithm.
 */
import type { Principal, Role } from './principal.ts';

export interface BucketShape {
  /** Requests that may be made at once from a full bucket. */
  burst: number;
  /** Refill rate in requests per second. */
  perSecond: number;
}

/**
 * Who is counted: a principal, or the client's address: its requests without a credential, and
 * (`failed`, a bucket of its own) its failed authentications.
 */
export type RateSubject = Pick<Principal, 'subject' | 'role'> | { address: string; failed?: boolean };

export interface RateLimiterOptions extends Partial<BucketShape> {
  /** (`burst` default 200, `perSecond` default 50.) Per-role overrides, e.g. a slower bucket for nodes (default none). */
  roles?: Partial<Record<Role, BucketShape>>;
  /** The bucket of one client address (default burst 20, 2 per second). */
  anonymous?: BucketShape;
  /** Buckets kept before the least recently used is dropped (default 100,000). A dropped bucket is full again. */
  maxKeys?: number;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
}

export const DEFAULT_ANONYMOUS_SHAPE: BucketShape = { burst: 20, perSecond: 2 };

export type RateLimitResult =
  | { ok: true; remaining: number }
  | { ok: false; code: 'RATE_LIMITED'; retryAfterSeconds: number; reason: string };

export interface RateLimiter {
  /** Take `cost` (default 1) from the caller's bucket. */
  take(who: RateSubject, cost?: number): RateLimitResult | Promise<RateLimitResult>;
  /** Whether the caller has a request left, taking nothing (refused: what `take` would answer). */
  check(who: RateSubject): RateLimitResult | Promise<RateLimitResult>;
  /** Buckets currently held (for metrics and tests). */
  size(): number;
  /** Stops background work (the shared limiter's syncing); the in-memory one has none. */
  close?(): Promise<void>;
}

export const isAddress = (who: RateSubject): who is { address: string; failed?: boolean } => 'address' in who;
export const rateKey = (who: RateSubject): string =>
  isAddress(who) ? `${who.failed ? 'fail' : 'addr'}:${who.address}` : `sub:${who.subject}`;
const label = (who: RateSubject): string =>
  isAddress(who) ? `${who.failed ? 'failed authentications from' : ''} address ${who.address}`.trim() : who.subject;

/** A bucket: `tokens` as of time `at` (ms). May be negative (a debt, see shared-rate-limit.ts). */
export interface Bucket {
  tokens: number;
  at: number;
  shape: BucketShape;
}

/**
 * Buckets by key, least recently used first, with the token bucket arithmetic. Shared by the in-memory
 * limiter and the shared one (which also overwrites `tokens` with what the database says).
 */
export class BucketTable {
  readonly base: BucketShape;
  readonly anonymous: BucketShape;
  private readonly roles: Partial<Record<Role, BucketShape>>;
  private readonly maxKeys: number;
  readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(opts: RateLimiterOptions) {
    this.base = { burst: opts.burst ?? 200, perSecond: opts.perSecond ?? 50 };
    this.anonymous = opts.anonymous ?? DEFAULT_ANONYMOUS_SHAPE;
    this.roles = opts.roles ?? {};
    for (const shape of [this.base, this.anonymous, ...Object.values(this.roles)]) {
      if (!(shape.burst >= 1) || !(shape.perSecond > 0)) throw new RangeError('rate limit needs burst >= 1 and perSecond > 0');
    }
    this.maxKeys = opts.maxKeys ?? 100_000;
    const clock = opts.now ?? (() => new Date());
    this.now = () => clock().getTime();
  }

  shapeOf(who: RateSubject): BucketShape {
    return isAddress(who) ? this.anonymous : (this.roles[who.role] ?? this.base);
  }

  get size(): number {
    return this.buckets.size;
  }

  peek(key: string): Bucket | undefined {
    return this.buckets.get(key);
  }

  /** The bucket, refilled for the time since it was last touched (a clock that steps back refills nothing), now most recently used. */
  touch(key: string, shape: BucketShape): Bucket {
    const t = this.now();
    const prev = this.buckets.get(key);
    const b: Bucket = prev
      ? {
          tokens: Math.min(shape.burst, prev.tokens + (Math.max(0, t - prev.at) / 1000) * shape.perSecond),
          at: Math.max(prev.at, t),
          shape,
        }
      : { tokens: shape.burst, at: t, shape };
    // Re-insert so Map order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, b);
    while (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return b;
  }

  /** Take `cost` from the bucket of `who` if it holds that much; the refusal says when to retry. */
  take(who: RateSubject, cost: number): RateLimitResult {
    const shape = this.shapeOf(who);
    const b = this.touch(rateKey(who), shape);
    if (cost <= b.tokens) {
      b.tokens -= cost;
      return { ok: true, remaining: Math.max(0, Math.floor(b.tokens)) };
    }
    return refusal(who, shape, b.tokens, cost);
  }

  check(who: RateSubject): RateLimitResult {
    const shape = this.shapeOf(who);
    const b = this.touch(rateKey(who), shape);
    return b.tokens >= 1 ? { ok: true, remaining: Math.floor(b.tokens) } : refusal(who, shape, b.tokens, 1);
  }
}

function refusal(who: RateSubject, shape: BucketShape, tokens: number, cost: number): RateLimitResult {
  if (cost > shape.burst) {
    return {
      ok: false,
      code: 'RATE_LIMITED',
      retryAfterSeconds: Math.ceil(shape.burst / shape.perSecond),
      reason: `request costs ${cost}, more than the burst of ${shape.burst}; it can never pass`,
    };
  }
  const retryAfterSeconds = Math.max(1, Math.ceil((cost - tokens) / shape.perSecond));
  return {
    ok: false,
    code: 'RATE_LIMITED',
    retryAfterSeconds,
    reason: `rate limit of ${shape.perSecond}/s (burst ${shape.burst}) exceeded for ${label(who)}; retry in ${retryAfterSeconds}s`,
  };
}

/** The in-memory limiter answers at once. */
export interface LocalRateLimiter extends RateLimiter {
  take(who: RateSubject, cost?: number): RateLimitResult;
  check(who: RateSubject): RateLimitResult;
}

/** The in-memory limiter: per process. */
export function createRateLimiter(opts: RateLimiterOptions = {}): LocalRateLimiter {
  const table = new BucketTable(opts);
  return {
    take: (who, cost = 1) => table.take(who, cost),
    check: (who) => table.check(who),
    size: () => table.size,
  };
}
