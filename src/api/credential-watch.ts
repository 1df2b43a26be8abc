/**
 * The end of a credential ends the live connections opened with it, on every API replica.
 *
 * A graphql-ws connection is authenticated once, at connection_init; its subscriptions then run as
 * long as the socket stays open. This watch closes the socket (4401, with the reason) when its
 * credential ends:
 *   - revoked or deleted API token: announced by a trigger on api_tokens through NOTIFY (channel
 *     bootorch_credentials, src/db/credentials.ts), so it reaches every replica in milliseconds,
 *     whoever revoked it (API, CLI, SQL);
 *   - expiry (API token or JWT `exp`): a timer per connection;
 *   - a notification missed while the LISTEN connection was down: every tracked token is checked
 *     again on reconnecting, and every `recheckMs` (default 30 s) in any case.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { startListener, type Listener } from '../db/listener.ts';
import { drizzleOver, sessionConfigOf, type Db } from '../db/client.ts';
import { CREDENTIALS_CHANNEL, endedTokens, type EndedToken } from '../db/credentials.ts';
import type { Principal } from '../auth/index.ts';
import type { TokenRowCache } from '../auth/token-rows.ts';

export interface CredentialWatchOptions {
  pool: pg.Pool;
  /** Settings of the LISTEN connection (default: the pool's). */
  listenConfig?: pg.ClientConfig;
  logger?: Logger;
  /** How often tracked tokens are checked even without a notification, ms (default 30000). */
  recheckMs?: number;
  /** Clock (default: the system clock). */
  now?: () => number;
}

/** Called once, with a sentence saying why, when the connection must close. */
export type EndConnection = (reason: string) => void;

interface Tracked {
  principal: Principal;
  end: EndConnection;
  timer?: NodeJS.Timeout;
  ended: boolean;
}

/** The longest setTimeout delay; later expiries re-arm. */
const MAX_DELAY = 2 ** 31 - 1;

export class CredentialWatch {
  private readonly pool: pg.Pool;
  private readonly db: Db;
  private readonly log?: Logger;
  private readonly listenConfig: pg.ClientConfig;
  private readonly recheckMs: number;
  private readonly now: () => number;
  private readonly byToken = new Map<string, Set<Tracked>>();
  private readonly all = new Set<Tracked>();
  private listener?: Listener;
  private starting?: Promise<void>;
  private recheckTimer?: NodeJS.Timeout;
  private closed = false;
  private cache?: TokenRowCache;
  /** Connections ended so far, by why (for tests and the closing figures). */
  readonly ended = { revoked: 0, expired: 0, deleted: 0 };

  constructor(o: CredentialWatchOptions) {
    this.pool = o.pool;
    this.db = drizzleOver(o.pool);
    this.log = o.logger;
    this.listenConfig = o.listenConfig ?? sessionConfigOf(o.pool);
    this.recheckMs = o.recheckMs ?? 30_000;
    this.now = o.now ?? Date.now;
  }

  /** Connections currently tracked. */
  get size(): number {
    return this.all.size;
  }

  /**
   * Vouch for the authenticator's cached token rows (src/auth/token-rows.ts): every announced end
   * invalidates the row, a heartbeat every 500 ms keeps the cache trusted, a lost connection empties
   * it. Starts listening now.
   */
  keepCache(cache: TokenRowCache): Promise<void> {
    this.cache = cache;
    return this.ready();
  }

  /** LISTEN (once; again after a failure). Tracking works before it, with expiry timers only. */
  ready(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.starting ??= this.connect().catch((e) => {
      this.starting = undefined;
      throw e;
    });
    return this.starting;
  }

  /**
   * Watch one connection's credential; `end` is called (once) when it ends. Returns the function that
   * stops watching (call it when the connection closes for any other reason).
   */
  track(principal: Principal, end: EndConnection): () => void {
    const t: Tracked = { principal, end, ended: false };
    this.all.add(t);
    if (principal.tokenId) {
      let set = this.byToken.get(principal.tokenId);
      if (!set) {
        set = new Set();
        this.byToken.set(principal.tokenId, set);
      }
      set.add(t);
    }
    if (principal.expiresAt) this.armExpiry(t, principal.expiresAt.getTime());
    if (!this.recheckTimer && !this.closed) {
      this.recheckTimer = setInterval(() => void this.recheck(), this.recheckMs);
      this.recheckTimer.unref();
    }
    void this.ready().catch((e) =>
      this.log?.warn({ err: (e as Error).message }, 'credential watch: LISTEN failed; expiry timers still apply'),
    );
    return () => this.untrack(t);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.recheckTimer);
    for (const t of this.all) clearTimeout(t.timer);
    this.all.clear();
    this.byToken.clear();
    await this.listener?.close();
    this.listener = undefined;
  }

  private untrack(t: Tracked): void {
    clearTimeout(t.timer);
    this.all.delete(t);
    const id = t.principal.tokenId;
    if (id) {
      const set = this.byToken.get(id);
      set?.delete(t);
      if (set?.size === 0) this.byToken.delete(id);
    }
    if (this.all.size === 0) {
      clearInterval(this.recheckTimer);
      this.recheckTimer = undefined;
    }
  }

  private finish(t: Tracked, why: keyof CredentialWatch['ended'], reason: string): void {
    if (t.ended) return;
    t.ended = true;
    this.untrack(t);
    this.ended[why]++;
    try {
      t.end(reason);
    } catch (e) {
      this.log?.warn({ err: (e as Error).message }, 'credential watch: closing a connection failed');
    }
  }

  private armExpiry(t: Tracked, at: number): void {
    const delay = at - this.now();
    if (delay <= 0) {
      this.finish(t, 'expired', `credential expired at ${new Date(at).toISOString()}`);
      return;
    }
    t.timer = setTimeout(() => this.armExpiry(t, at), Math.min(delay, MAX_DELAY));
    t.timer.unref();
  }

  private endToken(e: EndedToken): void {
    const set = this.byToken.get(e.id);
    if (!set) return;
    const when = e.at ? ` at ${e.at.toISOString()}` : '';
    const reason =
      e.why === 'deleted' ? `API token ${e.id} was deleted` : `API token ${e.id} ${e.why === 'revoked' ? 'was revoked' : 'expired'}${when}`;
    for (const t of [...set]) this.finish(t, e.why, reason);
  }

  /** A token was announced as ended: confirm with the database (for the reason), or end it anyway. */
  private async announced(id: string): Promise<void> {
    if (!this.byToken.has(id)) return;
    let ended: EndedToken[];
    try {
      ended = await endedTokens(this.db, [id]);
    } catch {
      ended = [{ id, why: 'revoked', at: null }];
    }
    for (const e of ended) this.endToken(e);
  }

  /** Check every tracked token against the database (after a missed notification, and periodically). */
  private async recheck(): Promise<void> {
    const ids = [...this.byToken.keys()];
    if (ids.length === 0) return;
    try {
      for (const e of await endedTokens(this.db, ids)) this.endToken(e);
    } catch (e) {
      this.log?.warn({ err: (e as Error).message }, 'credential watch: cannot check tokens; will retry');
    }
  }

  private async connect(): Promise<void> {
    const listener = await startListener({
      config: this.listenConfig,
      channels: [CREDENTIALS_CHANNEL],
      logger: this.log,
      name: 'credential watch',
      onNotification: (_channel, id) => {
        if (!id) return;
        this.cache?.invalidate(id);
        void this.announced(id);
      },
      onReconnect: () => this.recheck(), // whatever ended while nobody listened
      heartbeatMs: this.cache ? 500 : undefined,
      onAlive: () => this.cache?.alive(),
      onLost: () => this.cache?.lost(),
    });
    if (this.closed) await listener.close();
    else this.listener = listener;
  }
}
