/**
 * Subscription fan-out: S graphql-ws subscribers, on a separate API process, while the engine reboots N
 * nodes. Per event and subscriber, lag = arrival − the event's `at` (its writing transaction's start).
 * Also: how long after the session completed the last subscriber had its last event, bytes on the
 * wire per subscriber (TCP bytes read by the client), and the API process's peak RSS.
 *
 * `apiDir` runs the API from another checkout (the bench's "before" column: the same clients against
 * the code before multiplexing, in the same run).
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiToken } from '../src/auth/api-tokens.ts';
import type { Connection } from '../src/db/client.ts';
import { runScale } from './scale.ts';
import { peakRssMb, startApiProcess } from './api-load.ts';

export interface FanoutCase {
  label: string;
  subscribers: number;
  nodes: number;
  /** componentEventBatches (true) or componentEvents, one message per event. */
  batched: boolean;
  /** All on the session's events, or each on one node of it (a filter per subscriber). */
  filter: 'session' | 'one-node-each';
  /** Offer permessage-deflate (the API's BOOTORCH_WS_DEFLATE). */
  deflate?: boolean;
  /** Run the API from this checkout instead (see above). */
  apiDir?: string;
}

export interface FanoutResult extends FanoutCase {
  /** Events every subscriber should get, summed over subscribers. */
  deliveries: number;
  /** Deliveries missing 10 s after the session completed. */
  missing: number;
  p50: number;
  p99: number;
  /** From the session's completion to the last subscriber's last event, ms (NaN: not within 10 s). */
  drainMs: number;
  messagesPerSubscriber: number;
  bytesPerSubscriber: number;
  apiPeakRssMb: number;
  /** From the API's /metrics: executions of the document for a group, and falls back to the log. */
  executions: number;
  fellBehind: number;
  /** From the API's /metrics: the `at` of a shared message's oldest event to its socket write, upper bound of the bucket, ms. */
  writeLagP50: number;
  writeLagP99: number;
}

/** The upper bound (ms) of the histogram bucket holding quantile p, from prom-client's text format. */
function bucketQuantile(metrics: string, name: string, p: number): number {
  const buckets = [...metrics.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\S+)$`, 'gm'))].map(
    (m) => [Number(m[1]), Number(m[2])] as const,
  );
  const total = buckets.at(-1)?.[1] ?? 0;
  if (!total) return NaN;
  const hit = buckets.find(([, n]) => n >= p * total);
  return hit ? hit[0] * 1000 : NaN;
}

/** Lags in ms as a histogram (millions of deliveries, no array of them). */
class Lags {
  private readonly h = new Uint32Array(120_001);
  private n = 0;
  add(ms: number, times = 1): void {
    this.h[Math.max(0, Math.min(120_000, Math.round(ms)))]! += times;
    this.n += times;
  }
  at(p: number): number {
    const want = Math.max(1, Math.ceil(p * this.n));
    for (let i = 0, seen = 0; i < this.h.length; i++) if ((seen += this.h[i]!) >= want) return i;
    return NaN;
  }
}

const FIELDS = 'cursor at';
export async function runFanout(adminUrl: string, c: FanoutCase): Promise<FanoutResult> {
  const lags = new Lags();
  const got = new Array<number>(c.subscribers).fill(0);
  const messages = new Array<number>(c.subscribers).fill(0);
  const expected = new Array<number>(c.subscribers).fill(0);
  const sockets: WebSocket[] = [];
  class Tracked extends WebSocket {
    constructor(...a: ConstructorParameters<typeof WebSocket>) {
      super(...a);
      sockets.push(this);
    }
  }
  const clients: Client[] = [];
  let api: Awaited<ReturnType<typeof startApiProcess>> | undefined;
  let conn!: Connection;
  let nodeOf: string[] = [];
  let drainMs = NaN;
  let apiPeakRssMb = NaN;
  let bytes = 0;
  let metrics = '';
  let metricsHeaders: Record<string, string> = {};
  const tag = `_fan_${c.label.replace(/\W+/g, '_').toLowerCase()}`.slice(0, 30);
  await runScale(adminUrl, c.nodes, {
    tag,
    hooks: {
      async ready(x) {
        conn = x;
        const token = (await createApiToken(x.db, { role: 'viewer', subject: 'bench-fanout' })).token;
        // The API's /metrics wants a credential too (viewer or above).
        metricsHeaders = { authorization: `Bearer ${token}` };
        api = await startApiProcess(x, c.deflate ? { BOOTORCH_WS_DEFLATE: 'true' } : {}, c.apiDir);
        nodeOf =
          c.filter === 'one-node-each'
            ? (await x.pool.query('select id from components order by id limit $1', [c.subscribers])).rows.map((r) => r.id as string)
            : [];
        const wsUrl = api.url.replace(/^http/, 'ws');
        const field = c.batched ? 'componentEventBatches' : 'componentEvents';
        const selection = c.batched ? `{ cursor events { ${FIELDS} } }` : `{ ${FIELDS} }`;
        // From the log's current end: a subscription the API attaches late still gets every event.
        const after = String((await x.pool.query('select coalesce(max(id), 0) as m from component_events')).rows[0].m);
        const query = `subscription($f: ComponentEventFilter, $after: ID) { ${field}(filter: $f, after: $after) ${selection} }`;
        const subscribed: Promise<void>[] = [];
        for (let i = 0; i < c.subscribers; i++) {
          const client = createClient({
            url: wsUrl,
            webSocketImpl: Tracked,
            connectionParams: { authorization: `Bearer ${token}` },
            lazy: false,
            retryAttempts: 20,
          });
          clients.push(client);
          const f = c.filter === 'session' ? { session: 'bench' } : { session: 'bench', ids: [nodeOf[i]] };
          subscribed.push(
            new Promise<void>((resolve) => {
              client.subscribe(
                { query, variables: { f, after } },
                {
                  next: (m) => {
                    if (m.errors && process.env.BENCH_API_LOG) process.stderr.write(`errors: ${JSON.stringify(m.errors).slice(0, 500)}\n`);
                    const now = Date.now();
                    const d = (m.data as any)[field];
                    const evs: Array<{ at: string }> = c.batched ? d.events : [d];
                    for (const e of evs) lags.add(now - Date.parse(e.at));
                    got[i]! += evs.length;
                    messages[i]!++;
                  },
                  error: (e) => {
                    if (process.env.BENCH_API_LOG) process.stderr.write(`subscription error: ${String(e).slice(0, 300)}\n`);
                  },
                  complete: () => {},
                },
              );
              client.on('connected', () => resolve());
            }),
          );
        }
        await Promise.all(subscribed);
        // The API attaches subscriptions asynchronously (token check, tenant): start once all are live,
        // so the run measures the live path (an API without these metrics, the "before", is not waited for).
        const metricsUrl = api.url.replace(/graphql$/, 'metrics');
        const live = async () =>
          Number(/^bootorch_live_live (\S+)$/m.exec(await (await fetch(metricsUrl, { headers: metricsHeaders })).text())?.[1] ?? NaN);
        for (const until = Date.now() + 120_000; Date.now() < until; ) {
          const n = await live();
          if (Number.isNaN(n) || n >= c.subscribers) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      },
      async finished() {
        const done = Date.now();
        if (c.filter === 'session') {
          expected.fill(Number((await conn.pool.query(`select count(*) from component_events where session = 'bench'`)).rows[0].count));
        } else {
          const r = await conn.pool.query(
            `select component_id, count(*)::int as n from component_events where session = 'bench' group by 1`,
          );
          const by = new Map(r.rows.map((x) => [x.component_id as string, x.n as number]));
          nodeOf.forEach((id, i) => {
            expected[i] = by.get(id) ?? 0;
          });
        }
        const deadline = done + 10_000;
        const behind = () => got.some((n, i) => n < expected[i]!);
        while (Date.now() < deadline && behind()) await new Promise((r) => setTimeout(r, 20));
        if (!behind()) drainMs = Date.now() - done;
        apiPeakRssMb = peakRssMb(api!.child.pid!);
        metrics = await (await fetch(api!.url.replace(/graphql$/, 'metrics'), { headers: metricsHeaders })).text();
        if (process.env.BENCH_API_LOG) {
          const maxId = (await conn.pool.query('select max(id) from component_events')).rows[0].max;
          process.stderr.write(
            `log max id ${maxId}\n${metrics
              .split('\n')
              .filter((l) => l.startsWith('bootorch_live'))
              .join('\n')}\n`,
          );
        }
        bytes = sockets.reduce((n, s) => n + ((s as unknown as { _socket?: { bytesRead: number } })._socket?.bytesRead ?? 0), 0);
      },
    },
  });
  for (const cl of clients) await cl.dispose();
  api?.child.kill('SIGTERM');
  const deliveries = expected.reduce((a, n) => a + n, 0);
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return {
    ...c,
    deliveries,
    missing: got.reduce((a, n, i) => a + Math.max(0, expected[i]! - n), 0),
    p50: lags.at(0.5),
    p99: lags.at(0.99),
    drainMs,
    messagesPerSubscriber: messages.reduce((a, n) => a + n, 0) / c.subscribers,
    bytesPerSubscriber: bytes / c.subscribers,
    apiPeakRssMb,
    executions: metric('bootorch_live_executions'),
    fellBehind: metric('bootorch_live_fell_behind'),
    writeLagP50: bucketQuantile(metrics, 'bootorch_live_write_lag_seconds', 0.5),
    writeLagP99: bucketQuantile(metrics, 'bootorch_live_write_lag_seconds', 0.99),
  };
}
