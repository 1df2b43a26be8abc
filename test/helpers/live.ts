/**
 * Subscription helpers for the live tests: a graphql-ws subscription that collects what it receives
 * and lets a test wait (with a deadline) for a condition on it, re-checked on every message.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { LiveFeed } from '../../src/api/live/feed.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../src/api/server.ts';
import { noScheduler } from '../../src/engine/scheduler.ts';
import { freshDb, type TestDb } from './db.ts';
import { testAuth, type TestAuth } from './auth.ts';

export interface Collected<T> {
  items: T[];
  /** Arrival time (ms since epoch) of each item. */
  arrivedAt: number[];
  errors: unknown[];
  completed: boolean;
  /** Resolves when cond holds (checked now and on every message); rejects at the deadline. */
  until(cond: (items: T[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Stop the subscription (the client stays connected). */
  stop(): void;
}

export function wsClient(url: string, params: Record<string, string> = {}): Client {
  return createClient({ url, webSocketImpl: WebSocket, lazy: true, retryAttempts: 0, connectionParams: params });
}

/** Subscribe and collect `data[field]` of every result. */
export function collect<T = any>(client: Client, query: string, variables: Record<string, unknown> = {}): Collected<T> {
  const waiters = new Set<() => void>();
  const poke = () => {
    for (const w of [...waiters]) w();
  };
  const c: Collected<T> = {
    items: [],
    arrivedAt: [],
    errors: [],
    completed: false,
    until(cond, what, timeoutMs = 20_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (cond(c.items)) {
            done();
            resolve();
            return;
          }
          if (c.errors.length) {
            done();
            reject(new Error(`${what}: ${JSON.stringify(c.errors[0])}`));
            return;
          }
          if (c.completed) {
            done();
            reject(new Error(`${what}: the subscription completed first (${c.items.length} items)`));
          }
        };
        const deadline = setTimeout(() => {
          done();
          reject(new Error(`${what}: not reached within ${timeoutMs} ms (${c.items.length} items)`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(deadline);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    stop: () => unsubscribe(),
  };
  const unsubscribe = client.subscribe<Record<string, T>>(
    { query, variables },
    {
      next: (r) => {
        if (r.errors?.length) c.errors.push(...r.errors);
        const d = r.data ? Object.values(r.data)[0] : undefined;
        if (d !== undefined) {
          c.items.push(d as T);
          c.arrivedAt.push(Date.now());
        }
        poke();
      },
      error: (e) => {
        c.errors.push(...(Array.isArray(e) ? e : [e]));
        poke();
      },
      complete: () => {
        c.completed = true;
        poke();
      },
    },
  );
  return c;
}

/** Resolves when cond(feed) holds, re-checked on every change of the feed; rejects at the deadline. */
export function untilFeed(feed: LiveFeed, cond: (f: LiveFeed) => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  return untilState(feed, () => cond(feed), what, timeoutMs);
}

/** Resolves when cond() holds, re-checked on every state change of `source`; rejects at the deadline. */
export function untilState(
  source: { onState(fn: () => void): () => void },
  cond: () => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let off = () => {};
    const deadline = setTimeout(() => {
      off();
      reject(new Error(`${what}: not reached within ${timeoutMs} ms`));
    }, timeoutMs);
    const check = () => {
      if (cond()) {
        clearTimeout(deadline);
        off();
        resolve();
      }
    };
    off = source.onState(check);
    check();
  });
}

export const EVENT_FIELDS =
  'cursor at componentId session sessionTenant kind actor fromPhase toPhase fromStatus toStatus action error reason';

/** A real API server with its own live feed on a fresh database, and an admin's connectionParams. */
export interface LiveServer {
  db: TestDb;
  feed: LiveFeed;
  server: ApiServer;
  auth: TestAuth;
  /** connectionParams carrying an admin token. */
  creds: Record<string, string>;
  close(): Promise<void>;
}

export async function startLiveServer(o: Partial<ApiServerOptions> = {}): Promise<LiveServer> {
  const db = await freshDb();
  const feed = new LiveFeed({ pool: db.pool });
  const auth = await testAuth(db.db);
  const server = await startApiServer({ db: db.db, scheduler: noScheduler, port: 0, host: '127.0.0.1', live: feed, auth: auth.auth, ...o });
  return {
    db,
    feed,
    server,
    auth,
    creds: auth.bearer(auth.adminToken),
    async close() {
      await server.close();
      await feed.close();
      await db.drop();
    },
  };
}
