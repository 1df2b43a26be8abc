/**
 * Per-principal rate limiting: a token bucket per subject, in this process's memory.
 *
 * Why not rate-limiter-flexible: its memory store is a fixed window that reads Date.now() and arms
 * a timer per key, so tests would need fake timers instead of an injected clock, and a token
 * bucket (steady rate plus a burst) is the behaviour we want. This is the whole algorithm.
 *
 * Per process: with N API replicas a principal gets up to N times the rate. That is a guard
 * against runaway scripts, not a quota; a shared limit would belong in Postgres.
 */
import type { Principal, Role } from './principal.ts';

export interface BucketShape {
  /** Requests that may be made at once from a full bucket. */
  burst: number;
  /** Refill rate in requests per second. */
  perSecond: number;
}

export interface RateLimiterOptions extends Partial<BucketShape> {
  /** (`burst` default 200, `perSecond` default 50.) Per-role overrides, e.g. a slower bucket for nodes (default none). */
  roles?: Partial<Record<Role, BucketShape>>;
  /** Buckets kept before the least recently used is dropped (default 100,000). A dropped bucket is full again. */
  maxKeys?: number;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
}

export type RateLimitResult =
  | { ok: true; remaining: number }
  | { ok: false; code: 'RATE_LIMITED'; retryAfterSeconds: number; reason: string };

export interface RateLimiter {
  /** Take `cost` (default 1) from the principal's bucket, keyed by subject (all its tokens share one bucket). */
  take(principal: Pick<Principal, 'subject' | 'role'>, cost?: number): RateLimitResult;
  /** Buckets currently held (for metrics and tests). */
  size(): number;
}

interface Bucket { tokens: number; at: number }

export function createRateLimiter(opts: RateLimiterOptions = {}): RateLimiter {
  const base: BucketShape = { burst: opts.burst ?? 200, perSecond: opts.perSecond ?? 50 };
  for (const shape of [base, ...Object.values(opts.roles ?? {})]) {
    if (!(shape.burst >= 1) || !(shape.perSecond > 0)) throw new RangeError('rate limit needs burst >= 1 and perSecond > 0');
  }
  const maxKeys = opts.maxKeys ?? 100_000;
  const now = opts.now ?? (() => new Date());
  const buckets = new Map<string, Bucket>();

  return {
    take(principal, cost = 1) {
      const shape = opts.roles?.[principal.role] ?? base;
      const t = now().getTime();
      const key = principal.subject;
      const prev = buckets.get(key);
      // Refill for the time since the last take; a clock that steps back refills nothing.
      const tokens = prev
        ? Math.min(shape.burst, prev.tokens + (Math.max(0, t - prev.at) / 1000) * shape.perSecond)
        : shape.burst;
      // Re-insert so Map order is least recently used first.
      buckets.delete(key);
      const ok = cost <= tokens;
      buckets.set(key, { tokens: ok ? tokens - cost : tokens, at: t });
      while (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      if (ok) return { ok: true, remaining: Math.floor(tokens - cost) };
      if (cost > shape.burst) {
        return { ok: false, code: 'RATE_LIMITED', retryAfterSeconds: Math.ceil(shape.burst / shape.perSecond),
          reason: `request costs ${cost}, more than the burst of ${shape.burst}; it can never pass` };
      }
      const retryAfterSeconds = Math.max(1, Math.ceil((cost - tokens) / shape.perSecond));
      return { ok: false, code: 'RATE_LIMITED', retryAfterSeconds,
        reason: `rate limit of ${shape.perSecond}/s (burst ${shape.burst}) exceeded for ${principal.subject}; retry in ${retryAfterSeconds}s` };
    },
    size: () => buckets.size,
  };
}
