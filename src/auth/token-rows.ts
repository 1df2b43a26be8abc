/**
 * API token rows as the authenticator reads them: lookups that arrive while one is in flight are
 * answered by one statement (`id = any(...)`), and rows found are kept in memory while the cache is
 * trusted, so a node reporting again costs no query.
 *
 * Trust comes from the credential watch (src/api/credential-watch.ts): its LISTEN connection hears
 * every revocation, expiry and deletion (a trigger on api_tokens) and calls `invalidate(id)`, and
 * its heartbeat calls `alive()`. The cache is used only while the last heartbeat is younger than
 * `trustMs` (default 1,500 ms); when the watch is down, or lags, every lookup goes to the database
 * again, and the cache is emptied. So a revocation takes effect on every replica within milliseconds
 * when the watch is up, and within `trustMs` when it is not. A row is not kept when any invalidation
 * arrived while it was being read (it may predate the revocation). Expiry is checked on every use
 * (api-tokens.ts), not cached.
 *
 * Only node credentials are kept (the reporters' hot path; a human's token is read every time, so
 * an edit by hand in SQL takes effect at once), and a revocation made by this process (revoking, or
 * re-issuing a node's credential) is forgotten here before it returns, without waiting for its NOTIFY.
 */
import type { Db } from '../db/client.ts';
import { findApiTokens, type ApiTokenRow } from '../db/tokens.ts';

export interface TokenRows {
  find(id: string): Promise<ApiTokenRow | undefined>;
}

export interface TokenRowCacheOptions {
  /** How long after the watch's last heartbeat the cache is still trusted, ms (default 1500). */
  trustMs?: number;
  /** The longest a row is kept even while trusted, ms (default 30,000: other changes to a row). */
  maxAgeMs?: number;
  /** Most ids per statement (default 1000). */
  maxBatch?: number;
  now?: () => number;
}

/** The caches of this process, told directly about revocations made here (forgetTokens). */
const live = new Set<WeakRef<TokenRowCache>>();

/** These tokens were revoked by this process: no cache here may serve them again. */
export function forgetTokens(ids: readonly string[]): void {
  for (const ref of live) {
    const c = ref.deref();
    if (!c) {
      live.delete(ref);
      continue;
    }
    for (const id of ids) c.invalidate(id);
  }
}

interface Waiting {
  id: string;
  resolve(r: ApiTokenRow | undefined): void;
  reject(e: unknown): void;
}

export class TokenRowCache implements TokenRows {
  private readonly rows = new Map<string, { row: ApiTokenRow; at: number }>();
  private queue: Waiting[] = [];
  private running = false;
  private lastAlive = -Infinity;
  private invalidations = 0;
  private readonly trustMs: number;
  private readonly maxAgeMs: number;
  private readonly maxBatch: number;
  private readonly now: () => number;
  /** Lookups answered from memory, and statements run (for the bench and tests). */
  readonly counts = { hits: 0, statements: 0 };

  constructor(
    private readonly db: Db,
    o: TokenRowCacheOptions = {},
  ) {
    this.trustMs = o.trustMs ?? 1500;
    this.maxAgeMs = o.maxAgeMs ?? 30_000;
    this.maxBatch = o.maxBatch ?? 1000;
    this.now = o.now ?? Date.now;
    live.add(new WeakRef(this));
  }

  /** The watch's LISTEN connection answered just now: what it has not announced has not ended. */
  alive(): void {
    if (!this.trusted()) this.rows.clear(); // whatever was announced while it was down is unknown
    this.lastAlive = this.now();
  }

  /** The watch lost its connection: trust nothing kept. */
  lost(): void {
    this.lastAlive = -Infinity;
    this.rows.clear();
  }

  /** This token was revoked, expired or deleted (or changed): read it again next time. */
  invalidate(id: string): void {
    this.invalidations++;
    this.rows.delete(id);
  }

  trusted(): boolean {
    return this.now() - this.lastAlive < this.trustMs;
  }

  find(id: string): Promise<ApiTokenRow | undefined> {
    if (this.trusted()) {
      const kept = this.rows.get(id);
      if (kept && this.now() - kept.at < this.maxAgeMs) {
        this.counts.hits++;
        return Promise.resolve(kept.row);
      }
    } else if (this.rows.size) {
      this.rows.clear();
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ id, resolve, reject });
      void this.flush();
    });
  }

  /** The first lookup of a quiet period goes at once; those arriving meanwhile form the next statement. */
  private async flush(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        const before = this.invalidations;
        try {
          this.counts.statements++;
          const found = new Map((await findApiTokens(this.db, [...new Set(batch.map((w) => w.id))])).map((r) => [r.id, r]));
          const keep = this.trusted() && before === this.invalidations;
          const at = this.now();
          if (keep) for (const [id, row] of found) if (row.role === 'node') this.rows.set(id, { row, at });
          for (const w of batch) w.resolve(found.get(w.id));
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
