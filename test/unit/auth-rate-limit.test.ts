import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/auth/rate-limit.ts';
import { rateLimitError } from '../../src/auth/errors.ts';

function clock(start = Date.parse('2030-01-01T00:00:00Z')) {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}
const alice = { subject: 'alice', role: 'operator' as const };
const bob = { subject: 'bob', role: 'operator' as const };

describe('token bucket rate limiter', () => {
  it('allows a burst, then refuses with a retry-after', () => {
    const c = clock();
    const rl = createRateLimiter({ burst: 3, perSecond: 1, now: c.now });
    expect([1, 2, 3].map(() => rl.take(alice).ok)).toEqual([true, true, true]);
    expect(rl.take(alice)).toMatchObject({ ok: false, code: 'RATE_LIMITED', retryAfterSeconds: 1 });
  });

  it('refills at the steady rate and never above the burst', () => {
    const c = clock();
    const rl = createRateLimiter({ burst: 2, perSecond: 2, now: c.now });
    rl.take(alice);
    rl.take(alice);
    expect(rl.take(alice).ok).toBe(false);
    c.advance(500);
    expect(rl.take(alice)).toEqual({ ok: true, remaining: 0 });
    c.advance(3_600_000);
    expect(rl.take(alice)).toEqual({ ok: true, remaining: 1 });
  });

  it('keeps a bucket per subject', () => {
    const rl = createRateLimiter({ burst: 1, perSecond: 1, now: clock().now });
    expect(rl.take(alice).ok).toBe(true);
    expect(rl.take(alice).ok).toBe(false);
    expect(rl.take(bob).ok).toBe(true);
  });

  it('computes retry-after from the deficit', () => {
    const rl = createRateLimiter({ burst: 10, perSecond: 0.5, now: clock().now });
    expect(rl.take(alice, 10).ok).toBe(true);
    expect(rl.take(alice, 3)).toMatchObject({ ok: false, retryAfterSeconds: 6 });
  });

  it('refuses a request costing more than the burst outright', () => {
    const rl = createRateLimiter({ burst: 5, perSecond: 1, now: clock().now });
    expect(rl.take(alice, 6)).toMatchObject({ ok: false, reason: expect.stringMatching(/never pass/) });
    expect(rl.take(alice, 5).ok).toBe(true); // the refused request took nothing
  });

  it('uses per-role shapes', () => {
    const rl = createRateLimiter({ burst: 100, perSecond: 100, roles: { node: { burst: 1, perSecond: 0.1 } }, now: clock().now });
    const node = { subject: 'x1000c0s0b0n0', role: 'node' as const };
    expect(rl.take(node).ok).toBe(true);
    expect(rl.take(node)).toMatchObject({ ok: false, retryAfterSeconds: 10 });
  });

  it('refills nothing when the clock steps back', () => {
    const c = clock();
    const rl = createRateLimiter({ burst: 1, perSecond: 1, now: c.now });
    rl.take(alice);
    c.advance(-60_000);
    expect(rl.take(alice).ok).toBe(false);
  });

  it('drops the least recently used bucket beyond maxKeys', () => {
    const c = clock();
    const rl = createRateLimiter({ burst: 1, perSecond: 0.001, maxKeys: 2, now: c.now });
    rl.take(alice);
    rl.take(bob);
    rl.take(alice); // alice is now the most recent
    rl.take({ subject: 'carol', role: 'viewer' });
    expect(rl.size()).toBe(2);
    expect(rl.take(alice).ok).toBe(false); // kept, still empty
    expect(rl.take(bob).ok).toBe(true); // dropped, so full again
  });

  it('rejects nonsensical shapes', () => {
    expect(() => createRateLimiter({ burst: 0 })).toThrow(RangeError);
    expect(() => createRateLimiter({ perSecond: 0 })).toThrow(RangeError);
  });

  it('becomes a 429 GraphQLError with Retry-After', () => {
    const rl = createRateLimiter({ burst: 1, perSecond: 0.25, now: clock().now });
    rl.take(alice);
    const r = rl.take(alice);
    if (r.ok) throw new Error('expected a refusal');
    const e = rateLimitError(r);
    expect(e.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 4, http: { status: 429 } });
    expect((e.extensions.http as { headers: Map<string, string> }).headers.get('retry-after')).toBe('4');
  });
});
