/**
 * Kicks from any process (NOTIFY on KICK_CHANNEL, engine/boss-scheduler.ts): one LISTEN connection
 * per engine process; each name in a notification is handed to `onKick` (a tick queue's operator or
 * a job queue). The connection is re-made when it drops (PostgreSQL restarted), 200 ms to 5 s apart;
 * meanwhile pg-boss's 0.5 s fetch and the drains' idle still find the work. Kicks sent while it was
 * down went unheard, so `onReconnect` runs once it is back.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { sessionClient, sessionUrlOf } from '../db/client.ts';
import { errorText } from './outcome.ts';
import { KICK_CHANNEL } from './queue/names.ts';

const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5000;

export interface KickListenerOptions {
  url: string;
  log: Logger;
  onKick(name: string): void;
  onReconnect(): Promise<void>;
}

export class KickListener {
  private client?: pg.Client;
  private relisten?: NodeJS.Timeout;
  private backoffMs = FIRST_BACKOFF_MS;
  private stopped = false;

  constructor(private readonly o: KickListenerOptions) {}

  /** Connect and LISTEN; a failure is logged and retried, never thrown. */
  async start(): Promise<void> {
    const client = sessionClient({ connectionString: sessionUrlOf(this.o.url), application_name: 'bootorch-kick-listener' });
    client.on('notification', (n) => {
      for (const name of (n.payload ?? '').split(',')) this.o.onKick(name);
    });
    client.on('error', (e) => this.o.log.warn({ err: errorText(e) }, 'kick listener lost; polling until it is back'));
    client.on('end', () => {
      if (this.client === client) this.client = undefined;
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      await client.query(`listen ${KICK_CHANNEL}`);
      this.client = client;
      this.backoffMs = FIRST_BACKOFF_MS;
    } catch (e) {
      this.o.log.warn({ err: errorText(e) }, 'kick listener unavailable; polling until it is back');
      await client.end().catch(() => {});
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.relisten);
    await this.client?.end().catch(() => {});
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.relisten) return;
    this.relisten = setTimeout(() => {
      this.relisten = undefined;
      this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
      void this.start()
        .then(() => {
          if (this.client) return this.o.onReconnect();
        })
        .catch(() => {});
    }, this.backoffMs);
  }
}
