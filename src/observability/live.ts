/**
 * Live subscriptions, counted through one tiny interface the live code (or a wrapper around it)
 * calls: a stream opened, a message delivered, a stream closed. Queue lengths are read at scrape time
 * from the open streams that expose `queued`.
 */
import { gauge, liveDeliveries, liveSubscribers } from './metrics.ts';

const open = new Set<{ stream: string; queued?: () => number }>();

gauge(
  'bootorch_live_queued_messages',
  "Messages waiting in subscribers' in-memory queues on this API process, by stream",
  ['stream'],
  function () {
    this.reset();
    const sums = new Map<string, number>();
    for (const s of open) if (s.queued) sums.set(s.stream, (sums.get(s.stream) ?? 0) + s.queued());
    for (const [stream, n] of sums) this.set({ stream }, n);
  },
);

export interface LiveTracker {
  delivered(n?: number): void;
  close(): void;
}

/** A subscription opened on `stream` (componentEvents, sessionProgress, ...); close() exactly once when it ends. */
export function trackSubscription(stream: string, queued?: () => number): LiveTracker {
  const entry = { stream, queued };
  open.add(entry);
  liveSubscribers.inc({ stream });
  let closed = false;
  return {
    delivered: (n = 1) => liveDeliveries.inc({ stream }, n),
    close() {
      if (closed) return;
      closed = true;
      open.delete(entry);
      liveSubscribers.dec({ stream });
    },
  };
}

/** The same async iterator, counted: each value is a delivery; return() or the end closes it. */
export function observeStream<T>(stream: string, it: AsyncIterableIterator<T> & { queued?: number }): AsyncIterableIterator<T> {
  const t = trackSubscription(stream, () => it.queued ?? 0);
  const wrapped: AsyncIterableIterator<T> = {
    async next() {
      try {
        const r = await it.next();
        if (r.done) t.close();
        else t.delivered();
        return r;
      } catch (e) {
        t.close();
        throw e;
      }
    },
    async return(value?: unknown) {
      t.close();
      return it.return ? it.return(value) : { done: true, value: undefined as T };
    },
    async throw(e?: unknown) {
      t.close();
      if (it.throw) return it.throw(e);
      throw e;
    },
    [Symbol.asyncIterator]() {
      return wrapped;
    },
  };
  return wrapped;
}
