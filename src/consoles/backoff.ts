/**
 * The wait before a console session (SOL, SSH) or a SerialConsole read is tried again: doubling from
 * `firstMs` up to `maxMs`, each wait jittered to 0.5–1.5 times itself, so thousands of sessions that
 * failed together (a management switch rebooted) do not all come back in the same second. The waits
 * start over only once a session has held `heldMs` (default `maxMs`): a BMC that opens the console and
 * drops it at once ("console in use") is not tried every `firstMs`, for ever.
 */
export class Backoff {
  private ms: number;
  private readonly heldMs: number;

  constructor(
    private readonly firstMs = 1000,
    private readonly maxMs = 60_000,
    heldMs?: number,
  ) {
    this.ms = firstMs;
    this.heldMs = heldMs ?? maxMs;
  }

  /** The next wait, ms (at least `atLeastMs`, e.g. a refused login's); the one after is twice as long. */
  next(atLeastMs = 0): number {
    const wait = Math.round(this.ms * (0.5 + Math.random()));
    this.ms = Math.min(this.ms * 2, this.maxMs);
    return Math.max(wait, atLeastMs);
  }

  /** A session that was open since `openedAt` (ms since the epoch; undefined: it never opened) ended. */
  ended(openedAt: number | undefined): void {
    if (openedAt !== undefined && Date.now() - openedAt >= this.heldMs) this.ms = this.firstMs;
  }

  /** Start over (e.g. a read that answered). */
  reset(): void {
    this.ms = this.firstMs;
  }
}
