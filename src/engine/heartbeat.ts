/**
 * An engine process says it is alive: a row in engine_processes (db/engine-processes.ts) beaten every
 * few seconds from this process's event loop, so a wedged process stops beating as a dead one does.
 * The metrics (observability/collectors.ts) turn the rows into "engine processes alive", served by
 * every API replica too, and the alert BootorchEngineDown fires when none is.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { beat, forgetProcess } from '../db/engine-processes.ts';

/** How often a process beats (ms); a process not beaten for three periods counts as gone. */
export const HEARTBEAT_EVERY_MS = 5000;
export const HEARTBEAT_ALIVE_SECONDS = (3 * HEARTBEAT_EVERY_MS) / 1000;

export class EngineHeartbeat {
  readonly id = `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private timer?: NodeJS.Timeout;
  private failing = false;

  constructor(
    private readonly db: Db,
    private readonly role: string,
    private readonly log: Logger,
    private readonly everyMs = HEARTBEAT_EVERY_MS,
  ) {}

  /** Beats once now (an error is logged, not thrown: the database may be down), then every period. */
  async start(): Promise<void> {
    await this.beatOnce();
    this.timer = setInterval(() => void this.beatOnce(), this.everyMs);
    this.timer.unref();
  }

  private async beatOnce(): Promise<void> {
    try {
      await beat(this.db, { id: this.id, role: this.role, host: os.hostname(), pid: process.pid });
      if (this.failing) this.log.info('engine heartbeat written again');
      this.failing = false;
    } catch (e) {
      // One line when beating starts failing, not one per period.
      if (!this.failing) this.log.warn({ err: (e as Error).message }, 'engine heartbeat failed: the database is unreachable');
      this.failing = true;
    }
  }

  /** Stops beating and removes the row (a clean stop is not a dead engine). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await forgetProcess(this.db, this.id).catch(() => {});
  }
}
