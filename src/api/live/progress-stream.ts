/**
 * sessionProgress: the session's extended status, re-read when one of its events arrives or its row
 * changes (NOTIFY), at most once per `minIntervalMs`, and handed out only when it differs from the
 * last one sent (the running duration aside). A slow client gets the newest status, not a backlog.
 * Ends after the status that shows the session complete (the saved snapshot), or when the session is
 * deleted. A slow periodic re-read covers a lost notification.
 *
 * One reader per session and process (ProgressSource) serves every subscriber of that session
 * (ProgressStream): a thousand dashboards on one session cost the status reads of one. Each reading
 * carries the time it started, and a subscriber never takes a reading older than one it has, so its
 * statuses never go back (its own first read and the shared ones interleave).
 */
import type { SessionExtendedStatus } from '../../domain/session-status.ts';
import type { LiveFeed, SessionKey } from './feed.ts';

export interface ProgressStreamOptions {
  /** Least time between two reads of the status, ms (default 250: at most 4 per second). */
  minIntervalMs?: number;
  /** Re-read this often even without a signal, ms (default 5000). */
  safetyIntervalMs?: number;
  onError?: (e: unknown) => void;
}

/** A status as read (null: the session is gone) and when that read started. */
interface Reading {
  status: SessionExtendedStatus | null;
  startedAt: number;
}
type Read = () => Promise<SessionExtendedStatus | null>;

/** Equal for our purpose: the same but for the duration, which runs on by itself. */
const sameStatus = (a: SessionExtendedStatus, b: SessionExtendedStatus) =>
  JSON.stringify({ ...a, timing: { ...a.timing, duration: '' } }) === JSON.stringify({ ...b, timing: { ...b.timing, duration: '' } });

const sourcesOf = new WeakMap<LiveFeed, Map<string, ProgressSource>>();

/** A subscriber of a session's progress, following the session's shared reader (created on demand). */
export function followProgress(feed: LiveFeed, key: SessionKey, read: Read, o: ProgressStreamOptions = {}): ProgressStream {
  let sources = sourcesOf.get(feed);
  if (!sources) sourcesOf.set(feed, (sources = new Map()));
  const id = JSON.stringify([key.tenantKey, key.name]);
  let source = sources.get(id);
  if (!source) sources.set(id, (source = new ProgressSource(feed, key, read, o, () => sources.delete(id))));
  const stream = new ProgressStream(source);
  source.followers.add(stream);
  return stream;
}

/** Readers and subscribers of this feed's sessionProgress (tests, metrics). */
export function progressStats(feed: LiveFeed): { sources: number; followers: number; reads: number } {
  const s = { sources: 0, followers: 0, reads: 0 };
  for (const x of sourcesOf.get(feed)?.values() ?? []) {
    s.sources++;
    s.followers += x.followers.size;
    s.reads += x.reads;
  }
  return s;
}

class ProgressSource {
  readonly followers = new Set<ProgressStream>();
  reads = 0;
  private reading = false;
  private dirty = false;
  private done = false;
  private lastRead = 0;
  private timer?: NodeJS.Timeout;
  private readonly safety: NodeJS.Timeout;
  private readonly detach: Array<() => void>;
  private readonly minIntervalMs: number;

  constructor(
    feed: LiveFeed,
    key: SessionKey,
    private readonly read: Read,
    private readonly o: ProgressStreamOptions,
    private readonly forget: () => void,
  ) {
    this.minIntervalMs = o.minIntervalMs ?? 250;
    this.detach = [
      feed.onEvents((batch) => {
        if (batch.some((e) => e.session === key.name && e.sessionTenant === key.tenantKey)) this.trigger();
      }),
      feed.onSession((k) => {
        if (!k || (k.name === key.name && k.tenantKey === key.tenantKey)) this.trigger();
      }),
    ];
    this.safety = setInterval(() => this.trigger(), o.safetyIntervalMs ?? 5000);
  }

  unfollow(s: ProgressStream): void {
    this.followers.delete(s);
    if (this.followers.size === 0) this.stop();
  }

  private stop(): void {
    if (this.done) return;
    this.done = true;
    this.forget();
    for (const d of this.detach) d();
    clearInterval(this.safety);
    clearTimeout(this.timer);
  }

  /** Read now, or as soon as the interval allows; signals meanwhile collapse into one read. */
  private trigger(): void {
    if (this.done) return;
    if (this.reading) {
      this.dirty = true;
      return;
    }
    const wait = this.lastRead + this.minIntervalMs - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.trigger();
      }, wait);
      return;
    }
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    this.reading = true;
    const startedAt = (this.lastRead = Date.now());
    this.reads++;
    try {
      const status = await this.read();
      if (this.done) return;
      for (const f of [...this.followers]) f.offer({ status, startedAt });
      // The last status there will be: later subscribers start a reader of their own.
      if (status === null || status.status === 'complete') this.stop();
    } catch (e) {
      this.o.onError?.(e);
    } finally {
      this.reading = false;
    }
    if (this.dirty) {
      this.dirty = false;
      this.trigger();
    }
  }
}

export class ProgressStream implements AsyncIterableIterator<SessionExtendedStatus> {
  private pending?: SessionExtendedStatus;
  private lastSent?: SessionExtendedStatus;
  /** Start of the newest reading taken. */
  private newest = -Infinity;
  /** Readings offered before the subscriber's own first status: the newest of them. */
  private early?: Reading;
  private started = false;
  private ended = false;
  private closed = false;
  private wake?: () => void;

  constructor(private readonly source: ProgressSource) {}

  /** The status the subscriber read itself, after it began following (readings meanwhile are kept). */
  start(first: SessionExtendedStatus, readAt = Date.now()): this {
    this.started = true;
    this.offer({ status: first, startedAt: readAt });
    const early = this.early;
    this.early = undefined;
    if (early) this.offer(early);
    if (this.ended) this.source.unfollow(this);
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<SessionExtendedStatus> {
    return this;
  }

  async next(): Promise<IteratorResult<SessionExtendedStatus>> {
    while (!this.closed) {
      if (this.pending) {
        const value = this.pending;
        this.pending = undefined;
        this.lastSent = value;
        return { value, done: false };
      }
      if (this.ended) break;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    this.close();
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<SessionExtendedStatus>> {
    this.close();
    return { value: undefined, done: true };
  }

  async throw(e?: unknown): Promise<IteratorResult<SessionExtendedStatus>> {
    this.close();
    throw e;
  }

  /** @internal by ProgressSource */
  offer(r: Reading): void {
    if (!this.started) {
      if (!this.early || r.startedAt >= this.early.startedAt) this.early = r;
      return;
    }
    if (this.closed || this.ended || r.startedAt < this.newest) return;
    this.newest = r.startedAt;
    const s = r.status;
    if (s === null) {
      this.ended = true; // deleted: nothing more to show
    } else {
      const last = this.pending ?? this.lastSent;
      if (!last || !sameStatus(last, s)) this.pending = s;
      if (s.status === 'complete') this.ended = true;
    }
    if (this.ended) this.source.unfollow(this);
    this.wake?.();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = undefined;
    this.source.unfollow(this);
    this.wake?.();
  }
}
