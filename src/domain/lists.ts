/** List helpers shared by every layer (operators chunk their pages, adapters their requests). */

/** Split into chunks of `size` (0 or less = one chunk). An empty list gives no chunks. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (items.length === 0) return [];
  if (!size || size <= 0 || items.length <= size) return [items.slice()];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Items grouped by a key, in first-seen order (one outside call per group of like items). */
export function groupBy<T>(items: readonly T[], key: (t: T) => string): T[][] {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const g = m.get(k);
    if (g) g.push(i);
    else m.set(k, [i]);
  }
  return [...m.values()];
}

/**
 * Run fn over items with at most `limit` at once; results in input order. The first failure rejects
 * it and starts nothing more (those in flight are left to finish).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * At most `n` at a time; the others wait their turn in arrival order, those asked for `first` before
 * every other (each kind in its own arrival order).
 */
export class Turns {
  private running = 0;
  private readonly waiting = new Fifo<() => void>();
  private readonly waitingFirst = new Fifo<() => void>();
  constructor(private readonly n: number) {}

  take(first = false): Promise<void> {
    if (this.running < this.n) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => (first ? this.waitingFirst : this.waiting).push(resolve));
  }

  /** The turn passes to the next waiting one, if any. */
  give(): void {
    const next = this.waitingFirst.shift() ?? this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** fn in a turn of its own (ahead of the others waiting when `first`). */
  async run<T>(fn: () => Promise<T>, first = false): Promise<T> {
    await this.take(first);
    try {
      return await fn();
    } finally {
      this.give();
    }
  }

  /** Turns taken now. */
  get inUse(): number {
    return this.running;
  }
}

/**
 * A first-in first-out queue whose shift is O(1): an array's shift moves every element, and 100,000
 * BMC calls waiting for a turn made each turn's hand-over cost as much (a standalone reboot of
 * 100,000 nodes).
 */
class Fifo<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Drop the spent front once it is most of the array (amortised O(1)), or all of it.
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
