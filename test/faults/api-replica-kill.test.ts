/**
 * An API replica killed with SIGKILL under its subscribers. Two `bootorch api` processes, a worker and
 * `bootorch sim`; subscribers of componentEvents connected to replica B while a reboot runs. B is
 * killed in the middle; each client reconnects to replica A with the cursor of the last event it
 * received (what schema/live.graphql promises a client can do), and must end up with exactly the
 * events the log holds for its filter: none missing, none twice, in log order.
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { FAULT_OPTIONS, gql, kill, startStack, waitFor, type Stack } from './stack.ts';

const NODES = Number(process.env.FAULT_NODES_REPLICA ?? 200);

let db: TestDb;
let stack: Stack;
let admin: string;

interface Event {
  cursor: string;
  componentId: string;
  session: string;
  kind: string;
}

/**
 * A subscriber that fails over: on losing its connection it subscribes on the next URL, resuming
 * after the last cursor it received.
 */
function failoverSubscriber(urls: string[], token: string, filter: Record<string, unknown> | null, after: string) {
  const got: Event[] = [];
  const reconnects: { to: string; after: string }[] = [];
  let client: Client | undefined;
  let stopped = false;
  let current = 0;
  const subscribe = (url: string, from: string) => {
    client = createClient({
      url: url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      lazy: true,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${token}` },
    });
    const mine = client;
    mine.subscribe<{ componentEvents: Event }>(
      {
        query:
          'subscription($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after) { cursor componentId session kind } }',
        variables: { f: filter, after: from },
      },
      {
        next: (r) => {
          if (r.data) got.push(r.data.componentEvents);
        },
        error: () => {
          if (stopped || mine !== client) return;
          void mine.dispose();
          current = (current + 1) % urls.length;
          const resume = got.at(-1)?.cursor ?? from;
          reconnects.push({ to: urls[current]!, after: resume });
          subscribe(urls[current]!, resume);
        },
        complete: () => {},
      },
    );
  };
  subscribe(urls[0]!, after);
  return {
    got,
    reconnects,
    async stop() {
      stopped = true;
      await client?.dispose();
    },
  };
}

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('an API replica killed under subscribers', () => {
  beforeAll(async () => {
    db = await freshDb();
    await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(FAULT_OPTIONS)]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'fault-tests' })).token;
    stack = await startStack({ databaseUrl: db.url, nodes: NODES, timing: 'fast', apis: 2 });
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      120_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  test('clients reconnect to the other replica and resume from their cursor with no gap', async () => {
    // The nodes report to replica A (apiUrls[0]); the subscribers start on B and fail over to A.
    const [a, b] = stack.apiUrls as [string, string];
    await gql(
      a,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    const start = String((await db.pool.query('select coalesce(max(id), 0) as m from component_events')).rows[0].m);
    const subscribers = [
      { name: 'session filter', filter: { session: 'replica' }, sql: `session = 'replica'` },
      { name: 'everything', filter: null, sql: 'true' },
      { name: 'powering_on phase', filter: { phase: 'POWERING_ON' }, sql: `(from_phase = 'powering_on' or to_phase = 'powering_on')` },
    ].map((s) => ({ ...s, sub: failoverSubscriber([b, a], admin, s.filter, start) }));

    await gql(
      a,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "replica" }) { session { name } } }',
    );
    // Kill B once every subscriber is well into the session.
    await waitFor(async () => subscribers.every((s) => s.sub.got.length >= NODES), 'subscribers mid-session', 120_000, stack.logs, 50);
    const atKill = subscribers.map((s) => s.sub.got.length);
    await kill(stack.apis[1]!);

    const s = await waitFor(
      async () => {
        const r = (await db.pool.query(`select * from sessions where name = 'replica'`)).rows[0];
        return r?.status === 'complete' ? r : undefined;
      },
      'session complete',
      300_000,
      stack.logs,
    );
    expect(s.error).toBeNull();

    const lines: string[] = [];
    try {
      for (const x of subscribers) {
        const want = (
          await db.pool.query(`select id::text as cursor from component_events where id > $1 and ${x.sql} order by id`, [start])
        ).rows.map((r) => r.cursor as string);
        const last = want.at(-1)!;
        await waitFor(
          async () => x.sub.got.at(-1)?.cursor === last,
          `${x.name}: caught up with the log`,
          60_000,
          () => {
            const i = want.findIndex((id, k) => x.sub.got[k]?.cursor !== id);
            return (
              `received ${x.sub.got.length} of ${want.length}, last ${x.sub.got.at(-1)?.cursor} (want ${last}); first difference at ${i}: ` +
              `got ${JSON.stringify(x.sub.got.slice(Math.max(0, i - 2), i + 3))}, want ${want.slice(Math.max(0, i - 2), i + 3)}; reconnects ${JSON.stringify(x.sub.reconnects)}`
            );
          },
          50,
        );
        const cursors = x.sub.got.map((e) => e.cursor);
        expect(x.sub.reconnects.length, x.name).toBeGreaterThanOrEqual(1);
        expect(x.sub.reconnects[0]!.to, x.name).toBe(a);
        expect(new Set(cursors).size, `${x.name}: an event arrived twice`).toBe(cursors.length);
        expect(cursors, `${x.name}: the events received are exactly the log's, in order`).toEqual(want);
        lines.push(
          `${x.name}: ${cursors.length} events (${atKill[subscribers.indexOf(x)]} before the kill), resumed after cursor ${x.sub.reconnects[0]!.after}`,
        );
      }
    } finally {
      for (const x of subscribers) await x.sub.stop();
    }
    process.stdout.write(
      `\nAPI replica B killed (SIGKILL) under ${subscribers.length} subscribers during a ${NODES}-node reboot; ` +
        `each reconnected to A with its cursor: ${lines.join('; ')}; no gap, no duplicate\n`,
    );
  }, 600_000);
});
