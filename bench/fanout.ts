/**
 * Subscription fan-out: S graphql-ws subscribers on one session's componentEvents, on a separate API
 * process, while the engine reboots N nodes. Lag = arrival time − the event's `at`.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { createApiToken } from '../src/auth/api-tokens.ts';
import type { Connection } from '../src/db/client.ts';
import { runScale } from './scale.ts';
import { percentiles, startApiProcess } from './api-load.ts';

export interface FanoutResult { subscribers: number; nodes: number; events: number; p50: number; p99: number; missing: number }

export async function runFanout(adminUrl: string, subscribers: number, nodes: number): Promise<FanoutResult> {
  const lags: number[] = [];
  const counts = new Array<number>(subscribers).fill(0);
  const clients: Client[] = [];
  let api: Awaited<ReturnType<typeof startApiProcess>> | undefined;
  let conn!: Connection;
  let total = 0;
  await runScale(adminUrl, nodes, {
    tag: '_fan',
    hooks: {
      async ready(c) {
        conn = c;
        const token = (await createApiToken(c.db, { role: 'viewer', subject: 'bench-fanout' })).token;
        api = await startApiProcess(c);
        const wsUrl = api.url.replace(/^http/, 'ws');
        const subscribed: Promise<void>[] = [];
        for (let i = 0; i < subscribers; i++) {
          const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, lazy: false });
          clients.push(client);
          subscribed.push(new Promise<void>((resolve) => {
            client.subscribe({ query: 'subscription { componentEvents(filter: { session: "bench" }) { cursor at } }' }, {
              next: (m) => {
                const at = Date.parse((m.data as any).componentEvents.at);
                lags.push(Date.now() - at);
                counts[i]!++;
              },
              error: () => {},
              complete: () => {},
            });
            client.on('connected', () => resolve());
          }));
        }
        await Promise.all(subscribed);
      },
      async finished() {
        // Let the last notifications arrive.
        const deadline = Date.now() + 10_000;
        total = Number((await conn.pool.query(`select count(*) from component_events where session = 'bench'`)).rows[0].count);
        while (Date.now() < deadline && counts.some((n) => n < total)) await new Promise((r) => setTimeout(r, 50));
      },
    },
  });
  for (const c of clients) await c.dispose();
  api?.child.kill('SIGTERM');
  const p = percentiles(lags);
  return { subscribers, nodes, events: total, p50: p.p50, p99: p.p99, missing: counts.reduce((a, n) => a + Math.max(0, total - n), 0) };
}
