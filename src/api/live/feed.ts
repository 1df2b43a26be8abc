/**
 * The live feed of one API process: one LISTEN connection, one reader of the event log, and an
 * in-memory fan-out to this process's subscriptions. Events written by any process (workers, other
 * API replicas) reach every subscriber through Postgres: the NOTIFY only says "read the log".
 *
 * The feed hands out events strictly in id order and only once every smaller id is settled. Ids come
 * from a sequence, so a transaction may commit id 100 after another committed 101. When a read finds
 * such a hole, the events above it wait until every transaction that may hold a missing id has ended
 * (those with a smaller transaction id than one taken right after the read: db/live.ts inFlightBefore),
 * as seen by the snapshot of a later read, so the hole was filled or rolled back for good; `mark` is
 * the id up to which the log is settled, and subscribers that catch up from the log read up to it.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { sessionConfigOf } from '../../db/client.ts';
import { EVENTS_CHANNEL, SESSIONS_CHANNEL } from '../../db/events.ts';
import { allEnded, inFlightBefore, listenConnection, maxEventId, readFeed, type LiveEvent } from '../../db/live.ts';

export interface LiveFeedOptions {
  pool: pg.Pool;
  /** Settings of the LISTEN connection (default: the pool's). */
  listenConfig?: pg.ClientConfig;
  logger?: Logger;
  /** Rows per read of the log (default 1000). */
  pageSize?: number;
  /**
   * Longest wait for a hole in the ids to settle, ms (default 30000). Past it the hole is skipped
   * with a warning: only a transaction that holds an event uncommitted that long could lose it.
   */
  maxHoleWaitMs?: number;
}

export interface SessionKey {
  tenantKey: string;
  name: string;
}

type EventsListener = (events: LiveEvent[]) => void;
/**
 * Where an event's time went in the feed, ms since the epoch: its write (`at`, the row's write
 * time), the NOTIFY that woke the read that found it (about its commit), that read's answer, and
 * its handing out (every smaller id settled). Called once per event handed out (live-metrics.ts).
 */
export type TimingListener = (at: number, notifiedAt: number, readAt: number, handedOutAt: number) => void;
/** Called after every read of the log and every (un)subscription: metrics and tests watch the feed with it. */
type StateListener = (feed: LiveFeed) => void;
/** null: any session may have changed (the LISTEN connection was re-established). */
type SessionListener = (key: SessionKey | null) => void;

interface Hole {
  /** Highest id seen when the hole was found; every missing id up to it waits on `waitOn`. */
  ceiling: number;
  /** The transactions that may hold the missing ids (db/live.ts inFlightBefore). */
  waitOn: string[];
  since: number;
}

export class LiveFeed {
  /** Every event with id <= mark has been handed to the listeners (or never existed). */
  mark = 0;
  private readonly pool: pg.Pool;
  private readonly log?: Logger;
  private readonly pageSize: number;
  private readonly maxHoleWaitMs: number;
  private readonly listenConfig: pg.ClientConfig;
  private readonly eventListeners = new Set<EventsListener>();
  private readonly sessionListeners = new Set<SessionListener>();
  private readonly stateListeners = new Set<StateListener>();
  private readonly timingListeners = new Set<TimingListener>();
  private client?: pg.Client;
  private starting?: Promise<void>;
  private started = false;
  private closed = false;
  private pumping = false;
  private again = false;
  private hole?: Hole;
  private timer?: NodeJS.Timeout;
  private retryMs = 10;
  /** The first NOTIFY since the last read began (ms): about when the earliest unread write committed. */
  private notifiedAt?: number;
  /** For each event read but held back behind a hole: its read's NOTIFY and when it was first read (timing listeners). */
  private readonly firstRead = new Map<number, [number, number]>();

  constructor(o: LiveFeedOptions) {
    this.pool = o.pool;
    this.log = o.logger;
    this.pageSize = o.pageSize ?? 1000;
    this.maxHoleWaitMs = o.maxHoleWaitMs ?? 30_000;
    this.listenConfig = o.listenConfig ?? sessionConfigOf(o.pool);
  }

  /** Connects (once; again after a failure) and fixes the starting mark. */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('live feed closed'));
    this.starting ??= this.start().catch((e) => {
      this.starting = undefined;
      throw e;
    });
    return this.starting;
  }

  onEvents(fn: EventsListener): () => void {
    this.eventListeners.add(fn);
    this.changed();
    return () => {
      if (this.eventListeners.delete(fn)) this.changed();
    };
  }

  onTiming(fn: TimingListener): () => void {
    this.timingListeners.add(fn);
    return () => {
      this.timingListeners.delete(fn);
    };
  }

  onState(fn: StateListener): () => void {
    this.stateListeners.add(fn);
    return () => {
      this.stateListeners.delete(fn);
    };
  }

  /** True while events wait behind a gap in the ids that is not settled yet. */
  get holdingBack(): boolean {
    return this.hole !== undefined;
  }

  onSession(fn: SessionListener): () => void {
    this.sessionListeners.add(fn);
    return () => {
      this.sessionListeners.delete(fn);
    };
  }

  get subscriberCount(): number {
    return this.eventListeners.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.eventListeners.clear();
    this.sessionListeners.clear();
    this.stateListeners.clear();
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private async start(): Promise<void> {
    // LISTEN before taking the mark: a notification for anything after it cannot be missed.
    await this.connect();
    const maxId = await maxEventId(this.pool);
    // Ids below the newest may still be in flight: start once they have settled.
    const waitOn = await inFlightBefore(this.pool);
    const since = Date.now();
    for (let wait = 2; !(await allEnded(this.pool, waitOn)) && Date.now() - since < this.maxHoleWaitMs; wait = Math.min(wait * 2, 200)) {
      await new Promise((r) => setTimeout(r, wait));
    }
    this.mark = maxId;
    this.started = true;
    this.pump();
  }

  private async connect(): Promise<void> {
    const client = await listenConnection(this.listenConfig, [EVENTS_CHANNEL, SESSIONS_CHANNEL]);
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL) {
        this.notifiedAt ??= Date.now();
        this.pump();
      } else if (n.channel === SESSIONS_CHANNEL) this.sessionChanged(n.payload ?? '');
    });
    const lost = (e?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => {});
      this.log?.warn({ err: e?.message }, 'live feed: LISTEN connection lost; reconnecting');
      this.reconnect(100);
    };
    client.on('error', lost);
    client.on('end', () => lost());
  }

  private reconnect(delayMs: number): void {
    if (this.closed) return;
    setTimeout(async () => {
      try {
        await this.connect();
        // Whatever was written meanwhile is in the log; sessions may have changed unseen.
        this.pump();
        for (const fn of [...this.sessionListeners]) fn(null);
      } catch (e) {
        this.log?.warn({ err: (e as Error).message }, 'live feed: reconnect failed');
        this.reconnect(Math.min(delayMs * 2, 5000));
      }
    }, delayMs).unref();
  }

  private changed(): void {
    for (const fn of [...this.stateListeners]) fn(this);
  }

  private sessionChanged(payload: string): void {
    let key: SessionKey | null = null;
    try {
      const [tenantKey, name] = JSON.parse(payload) as [string, string];
      key = { tenantKey, name };
    } catch {
      /* unreadable: treat as "any session" */
    }
    for (const fn of [...this.sessionListeners]) fn(key);
  }

  /** Read the log now, or right after the read in progress (bursts of NOTIFY collapse into one read). */
  private pump(): void {
    if (!this.started || this.closed) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain();
  }

  private async drain(): Promise<void> {
    let failed = false;
    try {
      do {
        this.again = false;
        while (!this.closed && (await this.readOnce()));
      } while (this.again && !this.closed);
    } catch (e) {
      failed = true;
      this.log?.warn({ err: (e as Error).message }, 'live feed: reading the event log failed; retrying');
    } finally {
      this.pumping = false;
    }
    // A hole that no NOTIFY will resolve (a rollback) or a failed read: look again shortly.
    clearTimeout(this.timer);
    if ((this.hole || failed) && !this.closed) {
      this.timer = setTimeout(() => this.pump(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 500);
    } else {
      this.retryMs = 10;
    }
  }

  /** One read of the log; true when a full page was handed out (read again at once). */
  private async readOnce(): Promise<boolean> {
    // One snapshot answers both: the new rows, and whether the transactions a hole waits on have
    // ended. If they have, whatever they committed is among these rows, and a missing id is gone.
    const notifiedAt = this.notifiedAt ?? Date.now();
    this.notifiedAt = undefined;
    const { events, ended } = await readFeed(this.pool, this.mark, this.pageSize, this.hole?.waitOn);
    const readAt = Date.now();
    let settledTo = this.mark;
    if (this.hole) {
      const late = Date.now() - this.hole.since > this.maxHoleWaitMs;
      if (ended || late) {
        if (!ended) this.log?.warn({ after: this.mark, upTo: this.hole.ceiling }, 'live feed: skipping an unsettled gap in event ids');
        settledTo = this.hole.ceiling;
        this.hole = undefined;
      }
    }
    const out: LiveEvent[] = [];
    let found = false;
    let k = 0;
    for (; k < events.length; k++) {
      const e = events[k]!;
      if (e.id > this.mark + 1 && e.id - 1 > settledTo) {
        // A gap below e: ids held by transactions still in flight, or by ones that rolled back.
        if (!this.hole) {
          this.hole = { ceiling: events.at(-1)!.id, waitOn: await inFlightBefore(this.pool), since: Date.now() };
          found = true;
        }
        break;
      }
      out.push(e);
      this.mark = e.id;
    }
    if (this.timingListeners.size) {
      for (; k < events.length; k++) if (!this.firstRead.has(events[k]!.id)) this.firstRead.set(events[k]!.id, [notifiedAt, readAt]);
      const now = Date.now();
      for (const e of out) {
        const [notified, read] = this.firstRead.get(e.id) ?? [notifiedAt, readAt];
        this.firstRead.delete(e.id);
        for (const fn of this.timingListeners) fn(e.at.getTime(), notified, read, now);
      }
    }
    if (this.hole && this.mark >= this.hole.ceiling) this.hole = undefined;
    if (out.length) for (const fn of [...this.eventListeners]) fn(out);
    this.changed();
    // Read again at once after a full page, or right after finding a hole (often already settled).
    return found || (events.length === this.pageSize && out.length === events.length);
  }
}
