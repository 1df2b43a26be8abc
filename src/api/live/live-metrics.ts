/**
 * The multiplexer's state at /metrics (prom-client's default registry), read when scraped: groups,
 * subscribers (live or reading the log), executions, queued events, falls behind, the feed's mark;
 * summed over the multiplexers of this process (tests start several servers). And where a change's
 * time goes on its way out, as histograms from an event's write (its `at`, the row's write time):
 * to the NOTIFY that woke the feed's read of it (about its commit), to that read, to the feed handing
 * it out (after any gap in the ids settled), and to the socket write of the shared message that carries it.
 */
import { Gauge, Histogram, register } from 'prom-client';
import type { Multiplexer, MultiplexerStats } from './multiplexer.ts';
import type { LiveFeed } from './feed.ts';

const muxes = new Set<Multiplexer>();
const feeds = new Set<LiveFeed>();
const HELP: Record<keyof MultiplexerStats, string> = {
  groups: 'multiplexed subscription groups (same document, variables and visibility)',
  subscribers: 'componentEvents and componentEventBatches subscribers',
  live: 'subscribers receiving shared live payloads (the others read the log)',
  executions: 'executions of a subscription document for a whole group, since start',
  queuedEvents: 'live events queued for subscribers (references to shared payloads)',
  longestQueue: 'the longest queue of one subscriber, in events',
  fellBehind: 'times a subscriber fell behind and went back to the log, since start',
};

for (const [key, help] of Object.entries(HELP) as Array<[keyof MultiplexerStats, string]>) {
  const name = `bootorch_live_${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
  if (register.getSingleMetric(name)) continue;
  new Gauge({
    name,
    help,
    collect() {
      let v = 0;
      for (const m of muxes) v = key === 'longestQueue' ? Math.max(v, m.stats()[key]) : v + m.stats()[key];
      this.set(v);
    },
  });
}

const FEED: Record<string, [string, (f: LiveFeed) => number]> = {
  bootorch_live_feed_mark: ['the id up to which the live feed has read and settled the event log (highest of this process)', (f) => f.mark],
  bootorch_live_feed_holding_back: ['1 while the live feed holds events back behind a gap in the ids', (f) => (f.holdingBack ? 1 : 0)],
};
for (const [name, [help, read]] of Object.entries(FEED)) {
  if (register.getSingleMetric(name)) continue;
  new Gauge({
    name,
    help,
    collect() {
      let v = 0;
      for (const f of feeds) v = Math.max(v, read(f));
      this.set(v);
    },
  });
}

/** Report this multiplexer and feed at /metrics until the returned function is called. */
export function exposeLiveMetrics(mux: Multiplexer, feed: LiveFeed): () => void {
  muxes.add(mux);
  feeds.add(feed);
  const offTiming = feed.onTiming(observeFeedLag);
  return () => {
    muxes.delete(mux);
    feeds.delete(feed);
    offTiming();
  };
}

const WRITE_LAG = 'bootorch_live_write_lag_seconds';
const writeLag =
  (register.getSingleMetric(WRITE_LAG) as Histogram | undefined) ??
  new Histogram({
    name: WRITE_LAG,
    help: "from the oldest event's write (its `at`) to the socket write of a shared live message, per subscriber",
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  });

/** A shared message carrying an event written at `at` (ms since the epoch) was written to a socket now. */
export function observeWriteLag(at: number): void {
  writeLag.observe((Date.now() - at) / 1000);
}

const FEED_LAG = 'bootorch_live_feed_lag_seconds';
const feedLag =
  (register.getSingleMetric(FEED_LAG) as Histogram<'stage'> | undefined) ??
  new Histogram({
    name: FEED_LAG,
    help: "from an event's write (its `at`, the row's write time) to the live feed, by stage: notified (the NOTIFY that woke the read that found it: about its commit), read (that read's answer) and handed_out (to the subscriptions, every smaller id settled)",
    labelNames: ['stage'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
  });
const notifiedLag = feedLag.labels('notified');
const readLag = feedLag.labels('read');
const handedOutLag = feedLag.labels('handed_out');

/** An event written at `at` (ms since the epoch): the NOTIFY that woke its read, the read, handed out now (feed.ts TimingListener). */
function observeFeedLag(at: number, notifiedAt: number, readAt: number, now: number): void {
  notifiedLag.observe(Math.max(0, notifiedAt - at) / 1000);
  readLag.observe((readAt - at) / 1000);
  handedOutLag.observe((now - at) / 1000);
}
