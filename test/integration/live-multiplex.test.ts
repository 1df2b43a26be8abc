/**
 * Multiplexed subscriptions through real graphql-ws clients and a real API server: identical
 * subscribers share one execution per message (counted), different filters, tenants and roles get
 * their own groups and exactly their events, and batches carry exactly the log's events in order with
 * a cursor to resume from.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { TestDb } from '../helpers/db.ts';
import { collect, startLiveServer, untilState, wsClient, EVENT_FIELDS, type LiveServer } from '../helpers/live.ts';
import type { ApiServer } from '../../src/api/server.ts';
import { appendEvents, type NewEvent } from '../../src/db/events.ts';

let h: LiveServer;
let db: TestDb;
let server: ApiServer;
let admin: Record<string, string>;
let viewer: Record<string, string>;

beforeAll(async () => {
  h = await startLiveServer({ liveOptions: { windowMs: 20, maxBatch: 400 } });
  ({ db, server } = h);
  admin = h.creds;
  viewer = h.auth.bearer(await h.auth.token('viewer'));
  await db.pool.query(`insert into tenant_xnames (tenant, xname) values ('acme', 'x1c0s0b0n0'), ('acme', 'x1c0s0b0n2')`);
});
afterAll(async () => {
  await h.close();
});
// Each test counts subscribers and groups: the previous test's must be gone first.
afterEach(async () => {
  await untilState(
    server.live,
    () => server.live.stats().subscribers === 0 && server.live.stats().groups === 0,
    'subscribers and groups released',
  );
});

const BATCHES = `subscription($f: ComponentEventFilter, $after: ID) { componentEventBatches(filter: $f, after: $after) { cursor events { ${EVENT_FIELDS} } } }`;
const EVENTS = `subscription($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after) { ${EVENT_FIELDS} } }`;
const NODES = ['x1c0s0b0n0', 'x1c0s0b0n1', 'x1c0s0b0n2', 'x1c0s0b0n3'];
let seq = 0;
const events = (n: number, session: string): NewEvent[] =>
  Array.from({ length: n }, () => ({
    componentId: NODES[seq % NODES.length]!,
    session,
    kind: 'transition',
    actor: 'test',
    fromPhase: '',
    toPhase: 'powering_on',
    fromStatus: 'stable',
    toStatus: 'power_on_pending',
    reason: `r${++seq}`,
  }));
const flat = (batches: any[]) => batches.flatMap((b) => b.events);
const count = (batches: any[]) => batches.reduce((n, b) => n + b.events.length, 0);
/** The log's events of a session after a cursor, as Query.componentEvents pages them over HTTP. */
async function logOf(session: string, after = 0): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let cursor = String(after); ; ) {
    const r = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...admin },
      body: JSON.stringify({
        query: `query($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after, first: 1000) { ${EVENT_FIELDS} } }`,
        variables: { f: { session }, after: cursor },
      }),
    });
    const page = ((await r.json()) as any).data.componentEvents as any[];
    out.push(...page);
    if (page.length < 1000) return out;
    cursor = page.at(-1).cursor;
  }
}

describe('multiplexed subscriptions', () => {
  test('identical subscribers share one execution per message; other filters and tenants get their own', async () => {
    const base = String((await db.pool.query('select coalesce(max(id), 0)::int as m from component_events')).rows[0].m);
    const clients = [
      wsClient(server.wsUrl, admin),
      wsClient(server.wsUrl, admin),
      wsClient(server.wsUrl, { ...admin, 'Cray-Tenant-Name': 'acme' }),
    ];
    try {
      // Five alike (one resumes from a cursor: the cursor is its own, the group is shared), on two sockets.
      const same = [0, 1, 0, 1].map((i) => collect(clients[i]!, BATCHES, { f: { session: 'm1' } }));
      same.push(collect(clients[0]!, BATCHES, { f: { session: 'm1' }, after: base }));
      const other = collect(clients[1]!, BATCHES, { f: { session: 'm1', ids: ['x1c0s0b0n1'] } });
      // The same document and variables for a tenant and for the admin: two groups, each its own events.
      const byKind = { f: { kinds: ['transition'] } };
      const acme = [collect(clients[2]!, BATCHES, byKind), collect(clients[2]!, BATCHES, byKind)];
      const untenanted = collect(clients[0]!, BATCHES, byKind);
      await untilState(server.live, () => server.live.stats().live === 9, 'nine live subscribers');
      expect(server.live.stats().groups).toBe(4);
      const before = server.live.executions;
      const written = [...events(10, 'm1'), ...events(990, 'm1')];
      await appendEvents(db.db, written.slice(0, 10));
      await appendEvents(db.db, written.slice(10));
      for (const s of same) await s.until((b) => count(b) === 1000, 'all 1000');
      await other.until((b) => count(b) === written.filter((e) => e.componentId === 'x1c0s0b0n1').length, 'one node of four');
      for (const s of acme) await s.until((b) => count(b) === 500, "acme's two nodes");
      await untenanted.until((b) => count(b) === 1000, 'every node');
      // Every alike subscriber got the very same messages, made once.
      for (const s of same) expect(s.items).toEqual(same[0]!.items);
      expect(acme[1]!.items).toEqual(acme[0]!.items);
      expect(server.live.executions - before).toBe(
        same[0]!.items.length + other.items.length + acme[0]!.items.length + untenanted.items.length,
      );
      expect(flat(same[0]!.items)).toEqual(await logOf('m1', Number(base)));
      expect(new Set(flat(other.items).map((e) => e.componentId))).toEqual(new Set(['x1c0s0b0n1']));
      expect(new Set(flat(acme[0]!.items).map((e) => e.componentId))).toEqual(new Set(['x1c0s0b0n0', 'x1c0s0b0n2']));
    } finally {
      await Promise.all(clients.map((c) => c.dispose()));
    }
  });

  test('a viewer and an admin with the same document are separate groups, each with every event', async () => {
    const a = wsClient(server.wsUrl, admin);
    const v = wsClient(server.wsUrl, viewer);
    try {
      const subs = [
        collect(a, EVENTS, { f: { session: 'm2' } }),
        collect(a, EVENTS, { f: { session: 'm2' } }),
        collect(v, EVENTS, { f: { session: 'm2' } }),
        collect(v, EVENTS, { f: { session: 'm2' } }),
      ];
      await untilState(server.live, () => server.live.stats().live === 4, 'four live subscribers');
      expect(server.live.stats().groups).toBe(2);
      const before = server.live.executions;
      await appendEvents(db.db, events(30, 'm2'));
      for (const s of subs) await s.until((i) => i.length === 30, 'thirty events, one message each');
      // One execution per event per group, not per subscriber.
      expect(server.live.executions - before).toBe(60);
      for (const s of subs) expect(s.items).toEqual(await logOf('m2'));
    } finally {
      await Promise.all([a.dispose(), v.dispose()]);
    }
  });

  test("batches carry exactly the log's events in order; resuming from a batch's cursor continues without gap", async () => {
    const first = wsClient(server.wsUrl, admin);
    let got: any[] = [];
    try {
      const s = collect(first, BATCHES, { f: { session: 'm3' } });
      await untilState(server.live, () => server.live.stats().live === 1, 'subscribed');
      for (const n of [1, 700, 99, 1200]) await appendEvents(db.db, events(n, 'm3'));
      await s.until((b) => count(b) === 2000, 'two thousand events');
      got = s.items;
      for (const b of got) {
        expect(b.events.length).toBeGreaterThan(0);
        expect(b.events.length).toBeLessThanOrEqual(400);
        expect(b.cursor).toBe(b.events.at(-1).cursor);
      }
      expect(got.length).toBeLessThan(2000 / 2);
      expect(flat(got)).toEqual(await logOf('m3'));
    } finally {
      await first.dispose();
    }
    // Resume after the third batch: the rest from the log, then live, each event once.
    const second = wsClient(server.wsUrl, admin);
    try {
      const from = got[2].cursor;
      const r = collect(second, BATCHES, { f: { session: 'm3' }, after: from });
      await r.until((b) => count(b) === 2000 - count(got.slice(0, 3)), 'the rest');
      await appendEvents(db.db, events(5, 'm3'));
      await r.until((b) => count(b) === 2005 - count(got.slice(0, 3)), 'and the live ones');
      expect(flat(r.items)).toEqual(await logOf('m3', Number(from)));
    } finally {
      await second.dispose();
    }
  });
});
