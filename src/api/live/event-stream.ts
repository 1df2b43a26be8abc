/**
 * One componentEvents subscription: a hand-written AsyncIterator (stack notes §3) whose return()
 * detaches from the feed at once, even while a next() is waiting.
 *
 * Two sources, never both at a time, joined without gap or duplicate by the id of the last event
 * handed out (`cursor`):
 * - the log: pages of `cursor < id <= feed.mark`, for a client that resumes from a cursor, and for
 *   one that fell so far behind that its in-memory queue was dropped (the log is the real buffer);
 * - live: the feed's batches, kept when they match and come after the last queued id.
 * The switch from log to live happens in the same tick as a check that the feed has not moved since
 * the last page was read, so no batch can fall between the two.
 */
import type { Db } from '../../db/client.ts';
import { readEventsPage, type EventFilter, type LiveEvent } from '../../db/live.ts';
import type { LiveFeed } from './feed.ts';

export interface EventStreamOptions {
  /** Rows per read of the log (default 500). */
  pageSize?: number;
  /** Live events held for a slow client before it is switched back to reading the log (default 5000). */
  maxQueue?: number;
}

export class EventStream implements AsyncIterableIterator<LiveEvent> {
  private cursor: number;
  /** The log has been read up to here (everything matching in (cursor, scanned] is queued). */
  private scanned = 0;
  private queue: LiveEvent[] = [];
  /** Events waiting for this subscriber (metrics: bootorch_live_queued_messages). */
  get queued(): number { return this.queue.length; }
  private fromLog: boolean;
  private wake?: () => void;
  private closed = false;
  private readonly detach: () => void;
  private readonly pageSize: number;
  private readonly maxQueue: number;

  /** `after`: resume after this cursor (null: from now on). The feed must be ready. */
  constructor(
    private readonly feed: LiveFeed,
    private readonly db: Db,
    private readonly filter: EventFilter,
    private readonly matches: (e: LiveEvent) => boolean,
    after: number | null,
    o: EventStreamOptions = {},
  ) {
    this.pageSize = o.pageSize ?? 500;
    this.maxQueue = o.maxQueue ?? 5000;
    this.cursor = after ?? feed.mark;
    this.fromLog = after !== null;
    this.detach = feed.onEvents((batch) => this.onBatch(batch));
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<LiveEvent> {
    return this;
  }

  async next(): Promise<IteratorResult<LiveEvent>> {
    while (!this.closed) {
      const e = this.queue.shift();
      if (e) {
        this.cursor = e.id;
        return { value: e, done: false };
      }
      if (this.fromLog) await this.readLog();
      else await new Promise<void>((resolve) => { this.wake = resolve; });
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<LiveEvent>> {
    this.close();
    return { value: undefined, done: true };
  }

  async throw(e?: unknown): Promise<IteratorResult<LiveEvent>> {
    this.close();
    throw e;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.detach();
    this.wake?.();
  }

  private onBatch(batch: LiveEvent[]): void {
    if (this.closed || this.fromLog) return;
    const last = this.queue.at(-1)?.id ?? this.cursor;
    for (const e of batch) if (e.id > last && this.matches(e)) this.queue.push(e);
    if (this.queue.length > this.maxQueue) {
      // A client this far behind reads the log again from its cursor instead of holding memory.
      this.queue = [];
      this.scanned = 0;
      this.fromLog = true;
    }
    if (this.queue.length || this.fromLog) this.wake?.();
  }

  private async readLog(): Promise<void> {
    const upTo = this.feed.mark;
    const page = await readEventsPage(this.db, this.filter, Math.max(this.cursor, this.scanned), upTo, this.pageSize);
    if (this.closed) return;
    this.queue = page;
    if (page.length === this.pageSize) {
      this.scanned = page.at(-1)!.id;
      return;
    }
    this.scanned = upTo;
    // The log is read up to upTo. Batches above it were ignored while reading; if the feed has not
    // handed any out since (same mark), live picks up exactly after upTo. Otherwise read on from there.
    if (this.feed.mark === upTo) this.fromLog = false;
  }
}
