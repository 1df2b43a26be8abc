/**
 * A LISTEN connection that stays up: one dedicated client (never a pool's), re-established with
 * backoff (100 ms doubling to 5 s) when it is lost, with a callback after each re-establishment, since
 * whatever was announced meanwhile is lost and must be caught up from the tables.
 * (src/api/live/feed.ts keeps its own copy of this loop; it can move onto this one.)
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { listenConnection } from './live.ts';

export interface ListenerOptions {
  config: pg.ClientConfig;
  channels: string[];
  onNotification(channel: string, payload: string): void;
  /** After a lost connection is back (not after the first connect). */
  onReconnect?(): void | Promise<void>;
  logger?: Logger;
  /** Names the listener in log lines. */
  name: string;
  /**
   * Ask the connection `select 1` this often, ms (default: never), calling `onAlive` on each answer:
   * a caller that trusts "nothing announced means nothing happened" needs to know the connection is
   * really up, not just not yet known to be down.
   */
  heartbeatMs?: number;
  onAlive?(): void;
  /** The connection was lost (before reconnecting). */
  onLost?(): void;
}

export interface Listener {
  close(): Promise<void>;
}

/** Connects (rejects when the first connect fails), then keeps the connection up until close(). */
export async function startListener(o: ListenerOptions): Promise<Listener> {
  let client: pg.Client | undefined;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = await listenConnection(o.config, o.channels);
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    c.on('notification', (n) => o.onNotification(n.channel, n.payload ?? ''));
    o.onAlive?.();
    if (o.heartbeatMs) {
      heartbeat = setInterval(() => {
        c.query('select 1').then(
          () => {
            if (client === c) o.onAlive?.();
          },
          (e: Error) => lost(e),
        );
      }, o.heartbeatMs);
      heartbeat.unref();
    }
    const lost = (e?: Error) => {
      if (client !== c) return;
      client = undefined;
      clearInterval(heartbeat);
      o.onLost?.();
      c.end().catch(() => {});
      o.logger?.warn({ err: e?.message }, `${o.name}: LISTEN connection lost; reconnecting`);
      reconnect(100);
    };
    c.on('error', lost);
    c.on('end', () => lost());
  };
  const reconnect = (delayMs: number) => {
    if (closed) return;
    setTimeout(async () => {
      try {
        await connect();
        await o.onReconnect?.();
      } catch (e) {
        o.logger?.warn({ err: (e as Error).message }, `${o.name}: reconnect failed`);
        reconnect(Math.min(delayMs * 2, 5000));
      }
    }, delayMs).unref();
  };
  await connect();
  return {
    async close() {
      closed = true;
      clearInterval(heartbeat);
      o.onLost?.();
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
