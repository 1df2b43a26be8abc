/**
 * componentEvents over a real graphql-ws client and a real API server: live delivery, filters,
 * tenants, resuming from a cursor, transactions that commit out of id order or roll back, and the
 * release of a subscription's resources when its client goes away.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type pg from 'pg';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { collect, untilFeed, wsClient, EVENT_FIELDS } from '../helpers/live.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { LiveFeed } from '../../src/api/live/feed.ts';
import { appendEvents, type NewEvent } from '../../src/db/events.ts';
import { drizzleOver } from '../../src/db/client.ts';
import { noScheduler } from '../../src/engine/scheduler.ts';
import { testAuth } from '../helpers/auth.ts';

let db: TestDb;
let feed: LiveFeed;
let server: ApiServer;
/** connectionParams carrying an admin token (the server authenticates every subscription). */
let creds: Record<string, string>;

beforeAll(async () => {
  db = await freshDb();
  feed = new LiveFeed({ pool: db.pool });
  const auth = await testAuth(db.db);
  creds = auth.bearer(auth.adminToken);
  server = await startApiServer({ db: db.db, scheduler: noScheduler, port: 0, host: '127.0.0.1', live: feed, auth: auth.auth });
  await db.pool.query(`insert into tenant_xnames (tenant, xname) values ('acme', 'x1c0s0b0n0')`);
});
afterAll(async () => {
  await server.close();
  await feed.close();
  await db.drop();
});

const SUB = `subscription($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after) { ${EVENT_FIELDS} } }`;
let seq = 0;
const ev = (componentId: string, o: Partial<NewEvent> = {}): NewEvent => ({
  componentId,
  kind: 'transition',
  actor: 'test',
  fromPhase: '',
  toPhase: 'powering_on',
  fromStatus: 'stable',
  toStatus: 'power_on_pending',
  data: { n: ++seq },
  ...o,
});

async function write(events: NewEvent[]): Promise<void> {
  await appendEvents(db.db, events);
}

/** An open transaction that has written events (and so holds their ids) but not committed. */
async function openTx(events: NewEvent[]): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }> {
  const c: pg.PoolClient = await db.pool.connect();
  await c.query('begin');
  await appendEvents(drizzleOver(c), events);
  const end = async (sql: string) => {
    try {
      await c.query(sql);
    } finally {
      c.release();
    }
  };
  return { commit: () => end('commit'), rollback: () => end('rollback') };
}

const reasonsOf = (items: any[]) => items.map((e) => e.reason);

describe('componentEvents', () => {
  // Each test counts its own subscribers on the feed: the previous test's, released when its client's
  // socket close reaches the server, must be gone first (else "subscribed" can be the old group's).
  beforeEach(async () => {
    await untilFeed(feed, (f) => f.subscriberCount === 0, 'previous subscriptions released');
  });

  test('live events in order, with every field, only those the filter selects', async () => {
    const client = wsClient(server.wsUrl, creds);
    try {
      const all = collect(client, SUB);
      const mine = collect(client, SUB, { f: { ids: ['x1c0s0b0n1'], phase: 'POWERING_ON', kinds: ['transition'] } });
      const bySession = collect(client, SUB, { f: { session: 's1', status: 'POWER_ON_PENDING' } });
      await untilFeed(feed, (f) => f.subscriberCount === 3, 'three subscribers');
      await write([ev('x1c0s0b0n0', { reason: 'a', session: 's1' }), ev('x1c0s0b0n1', { reason: 'b' })]);
      await write([ev('x1c0s0b0n1', { reason: 'c', kind: 'action', action: 'powering_on', toPhase: 'powering_on', toStatus: null })]);
      await write([
        ev('x1c0s0b0n1', {
          reason: 'd',
          fromPhase: 'powering_on',
          toPhase: 'configuring',
          fromStatus: 'power_on_called',
          toStatus: 'configuring',
          error: 'boom',
        }),
      ]);
      await all.until((i) => i.length === 4, 'all four');
      expect(reasonsOf(all.items)).toEqual(['a', 'b', 'c', 'd']);
      const cursors = all.items.map((e) => Number(e.cursor));
      expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
      expect(all.items[3]).toMatchObject({
        componentId: 'x1c0s0b0n1',
        session: '',
        sessionTenant: null,
        kind: 'transition',
        actor: 'test',
        fromPhase: 'POWERING_ON',
        toPhase: 'CONFIGURING',
        fromStatus: 'POWER_ON_CALLED',
        toStatus: 'CONFIGURING',
        error: 'boom',
      });
      expect(all.items[0]).toMatchObject({ session: 's1', fromPhase: 'NONE', toStatus: 'POWER_ON_PENDING', action: null });
      expect(new Date(all.items[0].at).getTime()).toBeGreaterThan(Date.now() - 60_000);
      await mine.until((i) => i.length === 2, 'mine');
      expect(reasonsOf(mine.items)).toEqual(['b', 'd']);
      await bySession.until((i) => i.length === 1, 'by session');
      expect(reasonsOf(bySession.items)).toEqual(['a']);
    } finally {
      await client.dispose();
    }
  });

  test('a tenant sees only the events of its xnames', async () => {
    const admin = wsClient(server.wsUrl, creds);
    const acme = wsClient(server.wsUrl, { ...creds, 'Cray-Tenant-Name': 'acme' });
    const nobody = wsClient(server.wsUrl, { ...creds, 'Cray-Tenant-Name': 'nobody' });
    try {
      const a = collect(admin, SUB);
      const t = collect(acme, SUB);
      const bad = collect(nobody, SUB);
      await bad.until(() => bad.errors.length > 0, 'unknown tenant refused');
      expect(JSON.stringify(bad.errors)).toMatch(/Invalid tenant/);
      await untilFeed(feed, (f) => f.subscriberCount === 2, 'two subscribers');
      await write([ev('x1c0s0b0n1', { reason: 'other' }), ev('x1c0s0b0n0', { reason: 'owned' })]);
      await a.until((i) => i.length === 2, 'admin sees both');
      await t.until((i) => i.length === 1, 'tenant sees its own');
      expect(reasonsOf(t.items)).toEqual(['owned']);
    } finally {
      await Promise.all([admin.dispose(), acme.dispose(), nobody.dispose()]);
    }
  });

  test('a client that resumes from its last cursor receives every event exactly once, in order', async () => {
    const base = (await db.pool.query('select coalesce(max(id), 0)::int as m from component_events')).rows[0].m as number;
    const first = wsClient(server.wsUrl, creds);
    const got: any[] = [];
    const run = collect(first, SUB, { f: { ids: ['x1c0s0b0n2'] }, after: String(base) });
    await write(Array.from({ length: 30 }, (_, i) => ev('x1c0s0b0n2', { reason: `r${i}` })));
    await run.until((i) => i.length >= 12, 'some events');
    // The client goes away in the middle; events keep coming while it is gone.
    await first.dispose();
    got.push(...run.items);
    await untilFeed(feed, (f) => f.subscriberCount === 0, 'subscription released');
    await write(Array.from({ length: 30 }, (_, i) => ev('x1c0s0b0n2', { reason: `r${30 + i}` })));

    const second = wsClient(server.wsUrl, creds);
    try {
      const resumed = collect(second, SUB, { f: { ids: ['x1c0s0b0n2'] }, after: got.at(-1).cursor });
      await resumed.until((i) => got.length + i.length >= 60, 'the rest');
      // ...and live after the catch-up, still without a duplicate.
      await write([ev('x1c0s0b0n2', { reason: 'r60' })]);
      await resumed.until((i) => got.length + i.length === 61, 'one live event');
      const all = [...got, ...resumed.items];
      expect(reasonsOf(all)).toEqual(Array.from({ length: 61 }, (_, i) => `r${i}`));
      expect(new Set(all.map((e) => e.cursor)).size).toBe(61);
    } finally {
      await second.dispose();
    }
  });

  test('an event committed after a higher id is delivered in id order, not lost', async () => {
    const client = wsClient(server.wsUrl, creds);
    try {
      const s = collect(client, SUB, { f: { ids: ['x1c0s0b0n3'] } });
      await untilFeed(feed, (f) => f.subscriberCount === 1, 'subscribed');
      const slow = await openTx([ev('x1c0s0b0n3', { reason: 'slow' })]);
      await write([ev('x1c0s0b0n3', { reason: 'fast' })]);
      // The feed sees "fast" above a hole held by an open transaction, and holds it back.
      await untilFeed(feed, (f) => f.holdingBack, 'holding back behind the open transaction');
      expect(s.items).toEqual([]);
      await slow.commit();
      await s.until((i) => i.length === 2, 'both');
      expect(reasonsOf(s.items)).toEqual(['slow', 'fast']);
      expect(Number(s.items[0].cursor)).toBeLessThan(Number(s.items[1].cursor));
    } finally {
      await client.dispose();
    }
  });

  test('a hole held by a transaction newer than every finished one is waited for too', async () => {
    // A snapshot's xmax is the newest finished xid + 1: a writer with a newer xid is in flight but not
    // in the snapshot's list. Here the later id's writer has the older xid, so only that can happen.
    const client = wsClient(server.wsUrl, creds);
    const older = await db.pool.connect();
    const newer = await db.pool.connect();
    try {
      const s = collect(client, SUB, { f: { ids: ['x1c0s0b0n6'] } });
      await untilFeed(feed, (f) => f.subscriberCount === 1, 'subscribed');
      await older.query('begin');
      await older.query('select pg_current_xact_id()');
      await newer.query('begin');
      await newer.query('select pg_current_xact_id()');
      await appendEvents(drizzleOver(newer), [ev('x1c0s0b0n6', { reason: 'first id, newer xid' })]);
      await appendEvents(drizzleOver(older), [ev('x1c0s0b0n6', { reason: 'second id, older xid' })]);
      await older.query('commit');
      await untilFeed(feed, (f) => f.holdingBack, 'holding back');
      await write([ev('x1c0s0b0n6', { reason: 'third' })]);
      await newer.query('commit');
      await s.until((i) => i.length === 3, 'all three');
      expect(reasonsOf(s.items)).toEqual(['first id, newer xid', 'second id, older xid', 'third']);
    } finally {
      older.release();
      newer.release();
      await client.dispose();
    }
  });

  test('a rolled-back transaction leaves a gap that does not stop the feed', async () => {
    const client = wsClient(server.wsUrl, creds);
    try {
      const s = collect(client, SUB, { f: { ids: ['x1c0s0b0n4'] } });
      await untilFeed(feed, (f) => f.subscriberCount === 1, 'subscribed');
      const doomed = await openTx([ev('x1c0s0b0n4', { reason: 'never' })]);
      await write([ev('x1c0s0b0n4', { reason: 'after' })]);
      await untilFeed(feed, (f) => f.holdingBack, 'holding back');
      await doomed.rollback();
      await s.until((i) => i.length === 1, 'the committed event');
      await write([ev('x1c0s0b0n4', { reason: 'later' })]);
      await s.until((i) => i.length === 2, 'and the next');
      expect(reasonsOf(s.items)).toEqual(['after', 'later']);
      expect(feed.holdingBack).toBe(false);
    } finally {
      await client.dispose();
    }
  });

  test('a long transaction in another database does not hold the feed back', async () => {
    // xids are cluster-wide: an unrelated writer elsewhere is in every snapshot's in-flight list.
    const other = await freshDb();
    const elsewhere = await other.pool.connect();
    const client = wsClient(server.wsUrl, creds);
    try {
      await elsewhere.query('begin');
      await elsewhere.query('select pg_current_xact_id()');
      const s = collect(client, SUB, { f: { ids: ['x1c0s0b0n5'] } });
      await untilFeed(feed, (f) => f.subscriberCount === 1, 'subscribed');
      const doomed = await openTx([ev('x1c0s0b0n5', { reason: 'never' })]);
      await write([ev('x1c0s0b0n5', { reason: 'after' })]);
      await doomed.rollback();
      // Delivered while the other database's transaction is still open (well within its 30 s hole limit).
      await s.until((i) => i.length === 1, 'the committed event', 10_000);
      expect(reasonsOf(s.items)).toEqual(['after']);
    } finally {
      await client.dispose();
      await elsewhere.query('rollback').finally(() => elsewhere.release());
      await other.drop();
    }
  });

  test('bad arguments are refused with the field named', async () => {
    const client = wsClient(server.wsUrl, creds);
    try {
      const badCursor = collect(client, SUB, { after: 'abc' });
      const badId = collect(client, SUB, { f: { ids: ['not-an-xname'] } });
      await badCursor.until(() => badCursor.errors.length > 0, 'cursor refused');
      await badId.until(() => badId.errors.length > 0, 'id refused');
      expect(badCursor.errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'after' } });
      expect(badId.errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'filter.ids[0]' } });
    } finally {
      await client.dispose();
    }
  });
});
