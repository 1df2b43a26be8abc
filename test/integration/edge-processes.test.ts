/**
 * Two API processes (replicas) on one database, as deployed: the rate limit is shared by both, for a
 * principal and for anonymous callers; a credential revoked through one replica, or expiring, ends
 * the live subscriptions opened with it on both within 2 s, with a close reason.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { wsClient } from '../helpers/live.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { devAdminHeaders, devAuthEnv } from '../helpers/auth.ts';
import { createApiToken } from '../../src/auth/index.ts';

const BURST = 10;
const ANON_BURST = 6;
let db: TestDb;
let apiA: RoleProcess;
let apiB: RoleProcess;
let urlA: string;
let urlB: string;

beforeAll(async () => {
  db = await freshDb();
  const env = {
    DATABASE_URL: db.url,
    PORT: '0',
    ...devAuthEnv(),
    // Slow refill, so that what the test sees is the shared burst, not the refill.
    BOOTORCH_RATE_LIMIT_BURST: String(BURST),
    BOOTORCH_RATE_LIMIT_PER_SECOND: '0.05',
    BOOTORCH_RATE_LIMIT_ANON_BURST: String(ANON_BURST),
    BOOTORCH_RATE_LIMIT_ANON_PER_SECOND: '0.05',
  };
  apiA = startRole('api', env);
  urlA = (await apiA.waitFor(/bootorch api: (\S+)/))[1]!;
  apiB = startRole('api', env);
  urlB = (await apiB.waitFor(/bootorch api: (\S+)/))[1]!;
});

afterAll(async () => {
  await Promise.all([apiA?.stop(), apiB?.stop()]);
  await db?.drop();
});

const token = async (subject: string, ttlSeconds?: number) =>
  (await createApiToken(db.db, { role: 'operator', subject, ttlSeconds })).token;

async function call(url: string, headers: Record<string, string> = {}, query = '{ whoami { subject } }') {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  const body = (await r.json()) as { errors?: { message: string; extensions?: Record<string, unknown> }[] };
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body };
}

/** Resolves when the shared bucket of `key` holds less than one token (the replica has reported). */
function untilSpent(key: string, timeoutMs = 10_000): Promise<unknown> {
  let last: unknown[] = [];
  return waitFor(
    async () => {
      const r = await db.pool.query('select tokens from rate_limits where key = $1', [key]);
      last = r.rows;
      return r.rows[0] && Number(r.rows[0].tokens) < 1;
    },
    `bucket ${key} spent`,
    timeoutMs,
    () => JSON.stringify(last),
    20,
  );
}

describe('the rate limit is shared by two API processes', () => {
  test("a principal's burst spent on A is spent on B; both flooded at once admit about one burst", async () => {
    const bearer = { authorization: `Bearer ${await token('shared-limit')}` };
    const onA = [];
    for (let i = 0; i < BURST; i++) onA.push((await call(urlA, bearer)).status);
    expect(onA).toEqual(Array(BURST).fill(200));
    await untilSpent('sub:shared-limit');
    const onB = [];
    for (let i = 0; i < BURST; i++) onB.push(await call(urlB, bearer));
    expect(onB.map((r) => r.status)).toEqual(Array(BURST).fill(429));
    expect(Number(onB[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(onB[0]!.body.errors![0]).toMatchObject({
      extensions: { code: 'RATE_LIMITED' },
      message: expect.stringMatching(/exceeded for shared-limit/),
    });

    // A fresh principal, 40 requests at once, half to each replica.
    const flood = { authorization: `Bearer ${await token('flood')}` };
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => call(i % 2 ? urlA : urlB, flood)));
    const admitted = all.filter((r) => r.status === 200).length;
    expect(all.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    // At most a tenth of the burst per replica beyond the burst (shared-rate-limit.ts).
    expect(admitted).toBeGreaterThanOrEqual(BURST - 1);
    expect(admitted).toBeLessThanOrEqual(BURST + 2);
    process.stdout.write(
      `\nshared rate limit, burst ${BURST}, 2 replicas: ${BURST} on A then ${BURST} on B -> ${onB.filter((r) => r.status === 429).length} refused on B; ` +
        `40 at once on both -> ${admitted} admitted, ${40 - admitted} refused\n`,
    );
  });
});

describe("a credential's end ends its live streams on every replica", () => {
  const SUB = 'subscription { componentEvents(after: "0") { cursor } }';

  /** Opens `n` subscriptions on `url` with `bearer`; resolves each with its close event and time. */
  function subscribe(url: string, bearer: Record<string, string>, n: number) {
    const client = wsClient(url.replace(/^http/, 'ws'), bearer);
    const ended = Array.from(
      { length: n },
      () =>
        new Promise<{ code: number; reason: string; at: number }>((resolve, reject) => {
          client.subscribe(
            { query: SUB },
            {
              next: () => {},
              error: (e) => {
                const c = e as { code?: number; reason?: string };
                if (typeof c.code === 'number') resolve({ code: c.code, reason: c.reason ?? '', at: Date.now() });
                else reject(new Error(`not a close: ${JSON.stringify(e)}`));
              },
              complete: () => reject(new Error('completed instead of being closed')),
            },
          );
        }),
    );
    return { client, ended };
  }

  /** Resolves once the subscription is live (the server answered an operation on the same socket). */
  async function live(client: ReturnType<typeof wsClient>): Promise<void> {
    for await (const _ of client.iterate({ query: '{ version { version } }' })) {
      /* one answer */
    }
  }

  test('revoked through replica A: every subscription on A and B closes within 2 s (4401, with the reason)', async () => {
    const tok = await token('revoked-live');
    const bearer = { authorization: `Bearer ${tok}` };
    const a = subscribe(urlA, bearer, 3);
    const b = subscribe(urlB, bearer, 3);
    await Promise.all([live(a.client), live(b.client)]);
    const id = /^bto_([0-9a-f]{16})_/.exec(tok)![1];
    const t0 = Date.now();
    const r = await call(urlA, devAdminHeaders(), `mutation { revokeApiToken(id: "${id}") }`);
    expect(r.body.errors).toBeUndefined();
    const closes = await Promise.all([...a.ended, ...b.ended]);
    for (const c of closes) {
      expect(c.code).toBe(4401);
      expect(c.reason).toMatch(new RegExp(`API token ${id} was revoked`));
      expect(c.at - t0).toBeLessThan(2000);
    }
    process.stdout.write(
      `\nrevocation: ${closes.length} subscriptions on 2 replicas closed in at most ${Math.max(...closes.map((c) => c.at - t0))} ms after the revoke\n`,
    );
    // The same credential cannot reconnect.
    const again = subscribe(urlB, bearer, 1);
    expect(await again.ended[0]).toMatchObject({ code: 4403 });
    await Promise.all([a.client.dispose(), b.client.dispose(), again.client.dispose()]);
  });

  test('expiry: subscriptions opened with a short-lived token close within 2 s of its expiry, on both replicas', async () => {
    const tok = await token('expiring-live', 3);
    const expiresAt = Number(
      (await db.pool.query('select extract(epoch from expires_at) * 1000 as t from api_tokens where subject = $1', ['expiring-live']))
        .rows[0].t,
    );
    const bearer = { authorization: `Bearer ${tok}` };
    const a = subscribe(urlA, bearer, 1);
    const b = subscribe(urlB, bearer, 1);
    await Promise.all([live(a.client), live(b.client)]);
    const closes = await Promise.all([...a.ended, ...b.ended]);
    for (const c of closes) {
      expect(c.code).toBe(4401);
      expect(c.reason).toMatch(/expired/);
      expect(c.at - expiresAt).toBeLessThan(2000);
    }
    process.stdout.write(
      `\nexpiry: ${closes.length} subscriptions closed ${closes.map((c) => c.at - expiresAt).join(', ')} ms after the token's expiry\n`,
    );
    await Promise.all([a.client.dispose(), b.client.dispose()]);
  });
});

// Last: it spends this address's budget of failed authentications, after which bad credentials from it
// are refused for a while (valid ones still pass).
describe('anonymous callers', () => {
  test('anonymous flooding and random tokens are limited per client address across both replicas', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const headers: Record<string, string> =
        i % 3 === 0 ? { authorization: `Bearer bto_${String(i).padStart(16, '0')}_${'z'.repeat(43)}` } : {};
      statuses.push((await call(i % 2 ? urlA : urlB, headers, '{ version { version } }')).status);
    }
    const passed = statuses.filter((s) => s !== 429).length;
    // One bucket for requests without a credential, one for failed authentications, both shared.
    expect(passed).toBeGreaterThanOrEqual(2 * ANON_BURST - 2);
    expect(passed).toBeLessThanOrEqual(2 * ANON_BURST + 2);
    process.stdout.write(
      `\nanonymous flood, 60 requests over 2 replicas (a third with random tokens): ${60 - passed} refused with 429, ${passed} answered\n`,
    );
  });
});
