/**
 * Console sessions' waits (src/consoles/backoff.ts): doubling to a ceiling, each jittered to 0.5–1.5
 * times itself; starting over only after a session held long enough; a floor for a refused login.
 */
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/consoles/backoff.ts';

describe('Backoff', () => {
  it('doubles up to the ceiling, each wait within 0.5-1.5 times its step', () => {
    const b = new Backoff(1000, 8000);
    for (const step of [1000, 2000, 4000, 8000, 8000, 8000]) {
      const w = b.next();
      expect(w).toBeGreaterThanOrEqual(step * 0.5);
      expect(w).toBeLessThanOrEqual(step * 1.5);
    }
  });

  it('spreads thousands of sessions that failed together', () => {
    const waits = Array.from({ length: 2000 }, () => new Backoff(1000, 60_000).next());
    const seconds = new Set(waits.map((w) => Math.floor(w / 100)));
    // 0.5-1.5 s in 100 ms buckets: all ten used (and 1.5 s itself), none holding more than a fifth.
    expect(seconds.size).toBeGreaterThanOrEqual(10);
    const most = Math.max(...[...seconds].map((s) => waits.filter((w) => Math.floor(w / 100) === s).length));
    expect(most).toBeLessThan(400);
  });

  it('starts over only after a session held heldMs; a session that opened and dropped at once does not reset it', () => {
    const b = new Backoff(1000, 60_000, 30_000);
    b.next();
    b.next();
    b.next(); // the next step is 8 s
    b.ended(Date.now() - 500);
    expect(b.next()).toBeGreaterThanOrEqual(4000);
    b.ended(Date.now() - 31_000);
    expect(b.next()).toBeLessThanOrEqual(1500);
    b.ended(undefined);
    expect(b.next()).toBeGreaterThanOrEqual(1000);
  });

  it('waits at least the floor given (a refused login), and reset starts over', () => {
    const b = new Backoff(100, 800);
    expect(b.next(900_000)).toBe(900_000);
    b.next();
    b.reset();
    expect(b.next()).toBeLessThanOrEqual(150);
  });
});
