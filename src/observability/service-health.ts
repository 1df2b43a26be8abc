/**
 * Whether each outside service is failing, as this process sees it through its ports, told in two
 * log lines per outage: one when the service starts failing (with the first error) and one when it has
 * recovered (how long it failed, how many calls failed), never one per call. A call that fails with a
 * transient error (connection refused, timeout, 5xx; ServiceError.transient) starts an outage; a
 * refusal the service meant (4xx: not found, bad request) says nothing about its health. An outage
 * ends at a successful call made at least `settleMs` after the last failure, or at the third success
 * in a row, so a service that answers one call in two is one outage, not a line a second.
 */
import type { Logger } from 'pino';
import { ServiceError } from '../adapters/errors.ts';

interface Outage {
  since: number;
  lastFailure: number;
  failedCalls: number;
  successesInRow: number;
}

export class ServiceHealth {
  private readonly outages = new Map<string, Outage>();

  constructor(
    private readonly log: Logger,
    private readonly o: { settleMs?: number; now?: () => number } = {},
  ) {}

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  failed(service: string, operation: string, e: unknown): void {
    if (e instanceof ServiceError && !e.transient) return;
    const now = this.now();
    const outage = this.outages.get(service);
    if (outage) {
      outage.lastFailure = now;
      outage.failedCalls++;
      outage.successesInRow = 0;
      return;
    }
    this.outages.set(service, { since: now, lastFailure: now, failedCalls: 1, successesInRow: 0 });
    this.log.warn({ service, operation, err: (e as Error).message }, `${service} is failing: ${(e as Error).message}`);
  }

  succeeded(service: string): void {
    const outage = this.outages.get(service);
    if (!outage) return;
    const now = this.now();
    outage.successesInRow++;
    if (now - outage.lastFailure < (this.o.settleMs ?? 10_000) && outage.successesInRow < 3) return;
    this.outages.delete(service);
    const seconds = Math.round((outage.lastFailure - outage.since) / 1000);
    this.log.info(
      { service, failedSeconds: seconds, failedCalls: outage.failedCalls },
      `${service} recovered: it failed for ${seconds} s (${outage.failedCalls} calls failed)`,
    );
  }

  /** Services failing now, and since when (ms since the epoch). */
  failing(): Map<string, number> {
    return new Map([...this.outages].map(([s, o]) => [s, o.since]));
  }
}
