/**
 * The world's timers. Every delay in the simulation goes through here so `close()` can cancel all of
 * them at once: a test that forgets a pending boot or batch must not keep the process alive or fire
 * into the next test. Only one-shot timers: periodic work re-arms itself (no setInterval to leak).
 */
export class Timers {
  private readonly handles = new Set<NodeJS.Timeout>();
  private closed = false;
  private readonly sleepers = new Set<() => void>();

  /** Run `fn` after `ms` (0 = next macrotask). Returns a cancel function; cancelling twice is harmless. */
  after(ms: number, fn: () => void): () => void {
    if (this.closed) return () => {};
    const h = setTimeout(
      () => {
        this.handles.delete(h);
        fn();
      },
      Math.max(0, ms),
    );
    this.handles.add(h);
    return () => {
      clearTimeout(h);
      this.handles.delete(h);
    };
  }

  /** Resolves after `ms`; rejects with WorldClosedError if the world closes first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new WorldClosedError());
      const wake = () => reject(new WorldClosedError());
      this.sleepers.add(wake);
      this.after(ms, () => {
        this.sleepers.delete(wake);
        resolve();
      });
    });
  }

  get pending(): number {
    return this.handles.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
    for (const h of this.handles) clearTimeout(h);
    this.handles.clear();
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }
}

export class WorldClosedError extends Error {
  constructor() {
    super('simulated world is closed');
    this.name = 'WorldClosedError';
  }
}
