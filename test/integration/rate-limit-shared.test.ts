/**
 * The shared rate limiter (src/auth/shared-rate-limit.ts) over the real rate_limits table: two
 * limiters stand for two API replicas. What one admits, the other counts; concurrent floods on both
 * admit about one burst; without the database each limits on its own; full buckets are pruned.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { connect } from '../../src/db/client.ts';
import { dbStore } from '../../src/api/auth.ts';
import { createSharedRateLimiter, type SharedRateLimiter } from '../../src/auth/shared-rate-limit.ts';
import { pruneBuckets } from '../../src/db/rate-limits.ts';

let db: TestDb;
const open: SharedRateLimiter[] = [];
beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  for (const l of open) await l.close();
  await db?.drop();
});

/** A replica's limiter: burst 5, a refill too slow to matter within a test. */
function replica(o: { store?: ReturnType<typeof dbStore>; burst?: number } = {}): SharedRateLimiter {
  const l = createSharedRateLimiter({
    burst: o.burst ?? 5,
    perSecond: 0.001,
    anonymous: { burst: 2, perSecond: 0.001 },
    store: o.store ?? dbStore(db.db),
    waitMs: 2000,
  });
  open.push(l);
  return l;
}

const alice = { subject: 'alice', role: 'operator' as const };

describe('two replicas, one table', () => {
  test('what one admits the other counts, for a principal and for an address', async () => {
    const a = replica();
    const b = replica();
    for (let i = 0; i < 5; i++) expect((await a.take(alice)).ok).toBe(true);
    await a.flush();
    const refused = await b.take(alice);
    expect(refused).toMatchObject({ ok: false, code: 'RATE_LIMITED', reason: expect.stringMatching(/exceeded for alice/) });
    if (!refused.ok) expect(refused.retryAfterSeconds).toBeGreaterThan(100);
    expect((await b.check(alice)).ok).toBe(false);

    const addr = { address: '192.0.2.7' };
    expect((await a.take(addr)).ok).toBe(true);
    expect((await a.take(addr)).ok).toBe(true);
    await a.flush();
    expect(await b.take(addr)).toMatchObject({ ok: false, reason: expect.stringMatching(/address 192\.0\.2\.7/) });
    // Failed authentications are a bucket of their own.
    expect((await b.take({ address: '192.0.2.7', failed: true })).ok).toBe(true);
  });

  test('flooded at once on both, they admit one burst, plus at most a tenth of it each', async () => {
    const a = replica({ burst: 20 });
    const b = replica({ burst: 20 });
    const bob = { subject: 'bob', role: 'viewer' as const };
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).take(bob)));
    const admitted = results.filter((r) => r.ok).length;
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted).toBeLessThanOrEqual(24);
    await Promise.all([a.flush(), b.flush()]);
    const left = Number((await db.pool.query(`select tokens from rate_limits where key = 'sub:bob'`)).rows[0].tokens);
    expect(left).toBeCloseTo(20 - admitted, 1); // any overshoot is a debt
  });

  test('without the database, each limits on its own, and nothing throws', async () => {
    const dead = connect('postgres://postgres:x@127.0.0.1:1/none', { max: 1 });
    try {
      const l = replica({ store: dbStore(dead.db), burst: 3 });
      const carol = { subject: 'carol', role: 'viewer' as const };
      const got = [];
      for (let i = 0; i < 4; i++) got.push((await l.take(carol)).ok);
      expect(got).toEqual([true, true, true, false]);
    } finally {
      await dead.close();
    }
  });

  test('buckets that have refilled are pruned', async () => {
    const l = replica();
    await l.take({ subject: 'dave', role: 'viewer' });
    await l.flush();
    const dave = async () => (await db.pool.query(`select 1 from rate_limits where key = 'sub:dave'`)).rowCount;
    await pruneBuckets(db.db); // full buckets (first contacts that took nothing) may go
    expect(await dave()).toBe(1);
    await db.pool.query(`update rate_limits set at = at - interval '30 days' where key = 'sub:dave'`);
    expect(await pruneBuckets(db.db)).toBeGreaterThanOrEqual(1);
    expect(await dave()).toBe(0);
  });
});
