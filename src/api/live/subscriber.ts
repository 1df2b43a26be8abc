/**
 * One componentEvents / componentEventBatches subscription: a hand-written AsyncIterator (stack notes
 * §3) whose return() detaches at once, even while a next() is waiting. It hands graphql-ws two kinds
 * of deliveries (src/api/live/subscribe.ts):
 * - from the log, a root value this subscriber executes for itself: pages of `cursor < id <= feed.mark`,
 *   for a client that resumes from a cursor and for one that fell behind;
 * - live, a payload its group (multiplexer.ts) executed and serialized once for every subscriber with
 *   the same document, variables and visibility: only the socket write is this subscriber's.
 * The two are joined without gap or duplicate by the id of the last event handed out (`cursor`): the
 * switch from log to live happens in the same tick as a check that the feed has not moved since the
 * last page was read, and the group first flushes what it holds (all of it at or below that mark).
 *
 * Bounded: live payloads wait in a queue of at most `maxQueue` events (shared objects, so the memory
 * is the group's, not per subscriber). A subscriber that cannot keep up (its socket does not drain)
 * drops its queue and reads the log again from its cursor when it next asks; the log is the buffer.
 */
import type { Db } from '../../db/client.ts';
import { readEventsPage, type EventFilter, type LiveEvent } from '../../db/live.ts';
import type { LiveFeed } from './feed.ts';

/** A result serialized once for many subscribers (the JSON of graphql-ws's `next` payload). */
export interface SharedPayload {
  readonly json: Buffer;
  /** Id of the last event it carries. */
  readonly lastId: number;
  /** Events it carries. */
  readonly count: number;
  /** `at` of its oldest event, ms since the epoch (the write lag metric). */
  readonly oldestAt: number;
}

/** The root value of one message read from the log: an event, or a batch of events. */
export type LiveRoot = LiveEvent | EventBatch;
export interface EventBatch {
  events: LiveEvent[];
}

export type Delivery = { kind: 'own'; root: LiveRoot; lastId: number; count: number } | ({ kind: 'shared' } & SharedPayload);

/** What the group of a subscriber does for it (multiplexer.ts). */
export interface GroupLink {
  /** Deliver live from now on (the group flushes what it holds first). */
  join(s: LiveSubscriber): void;
  /** Stop delivering live (fell behind, or closed). */
  leave(s: LiveSubscriber): void;
  /** Gone for good. */
  detach(s: LiveSubscriber): void;
}

export interface LiveSubscriberOptions {
  /** Rows per read of the log (default 500). */
  pageSize?: number;
  /** Live events held for a slow client before it is switched back to reading the log (default 5000). */
  maxQueue?: number;
}

/** What the resolver decided (filter, visibility, cursor), before the subscriber joins a group. */
export interface LiveRequest {
  feed: LiveFeed;
  db: Db;
  filter: EventFilter;
  matches: (e: LiveEvent) => boolean;
  /** Resume after this cursor (null: from now on). */
  after: number | null;
  /** One message per batch of events (componentEventBatches) or per event (componentEvents). */
  batched: boolean;
  /** Role and tenant: what the group key adds to the document and variables. */
  visibility: string;
  /** Counts deliveries and the end (observability/live.ts trackSubscription). */
  tracker?: { delivered(n: number): void; close(): void };
}

export class LiveSubscriber implements AsyncIterableIterator<Delivery> {
  /** Id of the last event handed out. */
  cursor = 0;
  /** Times it fell behind and went back to the log (tests and metrics). */
  fellBehind = 0;
  private scanned = 0;
  private queue: Delivery[] = [];
  private queued = 0;
  private live = false;
  private group?: GroupLink;
  private wake?: () => void;
  private closed = false;
  private pageSize = 500;
  private maxQueue = 5000;

  constructor(readonly request: LiveRequest) {}

  /** Called once by the multiplexer; the feed must be ready. */
  attach(group: GroupLink, o: LiveSubscriberOptions = {}): void {
    this.group = group;
    this.pageSize = o.pageSize ?? this.pageSize;
    this.maxQueue = o.maxQueue ?? this.maxQueue;
    if (this.request.after === null) {
      this.cursor = this.request.feed.mark;
      this.goLive();
    } else {
      this.cursor = this.request.after;
    }
  }

  get isLive(): boolean {
    return this.live;
  }

  get queuedEvents(): number {
    return this.queued;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Delivery> {
    return this;
  }

  async next(): Promise<IteratorResult<Delivery>> {
    if (!this.group) throw new Error('componentEvents is served through the live multiplexer (src/api/live/subscribe.ts)');
    while (!this.closed) {
      const d = this.queue.shift();
      if (d) {
        this.queued -= d.count;
        this.cursor = d.lastId;
        this.request.tracker?.delivered(d.count);
        return { value: d, done: false };
      }
      if (!this.live) await this.readLog();
      else
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<Delivery>> {
    this.close();
    return { value: undefined, done: true };
  }

  async throw(e?: unknown): Promise<IteratorResult<Delivery>> {
    this.close();
    throw e;
  }

  /** Live payloads from the group, all after the cursor and after what is queued. */
  push(items: readonly SharedPayload[]): void {
    if (this.closed || !this.live) return;
    for (const p of items) {
      this.queue.push({ kind: 'shared', ...p });
      this.queued += p.count;
    }
    if (this.queued > this.maxQueue) {
      // Too far behind: forget the queue (memory), read the log from the cursor when asked again.
      this.fellBehind++;
      this.queue = [];
      this.queued = 0;
      this.scanned = 0;
      this.live = false;
      this.group?.leave(this);
    }
    this.wake?.();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.request.tracker?.close();
    this.queue = [];
    this.queued = 0;
    this.live = false;
    this.group?.detach(this);
    this.wake?.();
  }

  private goLive(): void {
    this.live = true;
    this.group!.join(this);
  }

  private async readLog(): Promise<void> {
    const { feed, db, filter, batched } = this.request;
    const upTo = feed.mark;
    if (this.cursor > upTo) {
      // A cursor another replica gave out, past what this one has settled: wait for the feed to get there.
      await new Promise<void>((resolve) => {
        const off = feed.onState(() => {
          if (this.closed || feed.mark >= this.cursor) {
            off();
            resolve();
          }
        });
        this.wake = () => {
          off();
          resolve();
        };
      });
      return;
    }
    const page = await readEventsPage(db, filter, Math.max(this.cursor, this.scanned), upTo, this.pageSize);
    if (this.closed) return;
    if (page.length) {
      const own = (root: LiveRoot, last: LiveEvent, count: number): Delivery => ({ kind: 'own', root, lastId: last.id, count });
      this.queue = batched ? [own({ events: page }, page.at(-1)!, page.length)] : page.map((e) => own(e, e, 1));
      this.queued = page.length;
    }
    if (page.length === this.pageSize) {
      this.scanned = page.at(-1)!.id;
      return;
    }
    this.scanned = upTo;
    // The log is read up to upTo. If the feed has not handed out a batch since (same mark), live picks
    // up exactly after upTo. Otherwise read on from there.
    if (feed.mark === upTo) this.goLive();
  }
}
