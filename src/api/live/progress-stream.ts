/**
 * One sessionProgress subscription: the session's extended status, re-read when one of its events
 * arrives or its row changes (NOTIFY), at most once per `minIntervalMs`, and handed out only when it
 * differs from the last one sent (the running duration aside). A slow client gets the newest status,
 * not a backlog. Ends after the status that shows the session complete (the saved snapshot), or when
 * the session is deleted. A slow periodic re-read covers a lost notification.
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

/** Equal for our purpose: the same but for the duration, which runs on by itself. */
const sameStatus = (a: SessionExtendedStatus, b: SessionExtendedStatus) =>
  JSON.stringify({ ...a, timing: { ...a.timing, duration: '' } }) === JSON.stringify({ ...b, timing: { ...b.timing, duration: '' } });

export class ProgressStream implements AsyncIterableIterator<SessionExtendedStatus> {
  private pending?: SessionExtendedStatus;
  private lastSent?: SessionExtendedStatus;
  private ended = false;
  private closed = false;
  private wake?: () => void;
  private reading = false;
  private dirty = false;
  private lastRead = 0;
  private timer?: NodeJS.Timeout;
  private readonly safety: NodeJS.Timeout;
  private readonly detach: Array<() => void>;
  private readonly minIntervalMs: number;

  private started = false;

  /** Listens at once; hand it the first status with start() (signals meanwhile cause a re-read). */
  constructor(
    feed: LiveFeed,
    key: SessionKey,
    private readonly read: () => Promise<SessionExtendedStatus | null>,
    private readonly o: ProgressStreamOptions = {},
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

  /** The status read after the constructor began listening. */
  start(first: SessionExtendedStatus, readAt = Date.now()): this {
    this.started = true;
    this.lastRead = readAt;
    this.offer(first);
    if (this.ended) this.stopListening();
    else if (this.dirty) {
      this.dirty = false;
      this.trigger();
    }
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
      await new Promise<void>((resolve) => { this.wake = resolve; });
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

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = undefined;
    this.stopListening();
    this.wake?.();
  }

  private stopListening(): void {
    for (const d of this.detach) d();
    clearInterval(this.safety);
    clearTimeout(this.timer);
  }

  private offer(s: SessionExtendedStatus): void {
    const last = this.pending ?? this.lastSent;
    if (!last || !sameStatus(last, s)) this.pending = s;
    if (s.status === 'complete') this.ended = true;
    this.wake?.();
  }

  /** Read now, or as soon as the interval allows; signals meanwhile collapse into one read. */
  private trigger(): void {
    if (this.closed || this.ended) return;
    if (this.reading || !this.started) { this.dirty = true; return; }
    const wait = this.lastRead + this.minIntervalMs - Date.now();
    if (wait > 0) {
      this.timer ??= setTimeout(() => { this.timer = undefined; this.trigger(); }, wait);
      return;
    }
    void this.refresh();
  }

  private async refresh(): Promise<void> {
    this.reading = true;
    this.lastRead = Date.now();
    try {
      const s = await this.read();
      if (this.closed) return;
      if (s === null) {
        this.ended = true; // deleted: nothing more to show
        this.wake?.();
      } else {
        this.offer(s);
      }
      if (this.ended) this.stopListening();
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
