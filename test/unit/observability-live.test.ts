/**
 * Live streams counted through observeStream: a subscriber while it is open, each delivered message,
 * the messages waiting in its queue at scrape time; ending or returning closes it exactly once.
 */
import { describe, expect, it } from 'vitest';
import { observeStream } from '../../src/observability/live.ts';
import { local, value } from '../helpers/metrics.ts';

/** A stream of `items` that says how many are still queued, as EventStream does. */
function stream(items: number[]): AsyncIterableIterator<number> & { queued: number } {
  const it = {
    get queued() {
      return items.length;
    },
    async next() {
      return items.length ? { done: false, value: items.shift()! } : { done: true as const, value: undefined };
    },
    async return() {
      items.length = 0;
      return { done: true as const, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it as AsyncIterableIterator<number> & { queued: number };
}

const read = async (name: string) => value(await local(), name, { stream: 'componentEvents' });

describe('live stream metrics', () => {
  it('count subscribers, deliveries and queued messages; close once on return or end', async () => {
    const a = observeStream('componentEvents', stream([1, 2, 3]));
    const b = observeStream('componentEvents', stream([7]));
    expect(await read('bootorch_live_subscribers')).toBe(2);
    expect(await read('bootorch_live_queued_messages')).toBe(4);
    expect((await a.next()).value).toBe(1);
    expect(await read('bootorch_live_deliveries_total')).toBe(1);
    expect(await read('bootorch_live_queued_messages')).toBe(3);
    await a.return!();
    await a.return!();
    expect(await read('bootorch_live_subscribers')).toBe(1);
    expect((await b.next()).value).toBe(7);
    expect((await b.next()).done).toBe(true);
    await b.return!();
    expect(await read('bootorch_live_subscribers')).toBe(0);
    expect(await read('bootorch_live_deliveries_total')).toBe(2);
    expect(await read('bootorch_live_queued_messages')).toBe(0);
  });
});
