/**
 * Which process runs which tick, in a form that dies with the process.
 *
 * pg-boss marks a fetched job `active` and trusts the worker to complete it. A worker killed with
 * SIGKILL, or cut off from the database when its tick ends, leaves the job active until it expires
 * (an hour for operator ticks), and a `stately` queue starts no other tick meanwhile: that operator
 * would stop for an hour. So each engine process holds, on one dedicated connection, a session
 * advisory lock per job it is running. Postgres drops the locks when the connection dies. The reaper
 * (every process runs one) fails active jobs whose lock nobody holds, twice in a row, so the queue
 * moves on, and kicks their operator so that its tick is not lost.
 *
 * A process that lost its lock connection re-takes its locks on reconnecting; "twice in a row" gives
 * it a reaper period to do so before another process calls its jobs orphaned, and a reaper whose own
 * connection is new (the database restarted: every process is reconnecting) confirms nothing for
 * QUIET_AFTER_CONNECT_MS, while the others re-take theirs.
 *
 * A dead process costs its jobs: the grace, then two rounds. At 3 s and 1.5 s that was 3.4 to 5.5 s per
 * SIGKILL in the fault test (a young tick or timer), and five kills of one reboot could cost more than
 * the 20 s it allows; at 1 s and 1 s it is 2 to 3 s.
 */
import type pg from 'pg';
import { sessionClient, sessionUrlOf } from '../db/client.ts';
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { countReaped } from '../observability/engine.ts';
import { JOB_RETRY_MAX_DELAY } from './action-jobs.ts';
import { failJobs, unleasedActiveJobs } from './queue/jobs.ts';

/** First key of the two-key advisory locks: "bo" (0x626f), so they cannot collide with other users'. */
const LEASE_SPACE = 0x626f;
/** After its lock connection is (re)made, a reaper suspects but confirms nothing for this long (ms). */
const QUIET_AFTER_CONNECT_MS = 3000;
/** The lock connection is retried at most this far apart (ms): well within another reaper's quiet period after connecting. */
const RECONNECT_MAX_MS = 500;

export interface LeaseOptions {
  url: string;
  log: Logger;
  /** Queues whose active jobs are leased and reaped: names starting with this prefix. */
  queuePrefix: string;
  /** Seconds a job may be active before the reaper looks at it (default 1): the time between fetch and lock. */
  graceSeconds?: number;
  /** Reaper period in ms (default 1000): a dead process's jobs are reaped 1 to 3 s after its death. */
  reapEveryMs?: number;
  /** Confirms nothing for this long after its lock connection is made (default QUIET_AFTER_CONNECT_MS; tests set 0). */
  quietAfterConnectMs?: number;
}

export class TickLeases {
  private client?: pg.Client;
  private readonly held = new Set<string>();
  private suspects = new Set<string>();
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  private backoffMs = 200;
  /** When the lock connection was last made (QUIET_AFTER_CONNECT_MS). */
  private connectedAt = 0;
  private reaping = false;
  /** Queries on the lock connection run one after another (pg deprecates overlapping them on one client). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Reaper rounds finished (tests wait on it). */
  rounds = 0;

  constructor(private readonly o: LeaseOptions) {}

  /** Connect the lock connection and start reaping; `onReaped` gets the queue names of reaped jobs. */
  async start(boss: PgBoss, onReaped: (queues: string[]) => Promise<void>): Promise<void> {
    await this.connect().catch((e) => this.o.log.warn({ err: String(e) }, 'tick leases: lock connection unavailable; retrying'));
    this.timer = setInterval(() => void this.reap(boss, onReaped), this.o.reapEveryMs ?? 1000);
    await this.reap(boss, onReaped);
  }

  /** Take the lease of a job this process is about to run. Never throws: a lost connection re-takes it later. */
  async hold(jobId: string): Promise<void> {
    this.held.add(jobId);
    await this.run('select pg_try_advisory_lock($1, hashtext($2))', [LEASE_SPACE, jobId]).catch(() => {});
  }

  async release(jobId: string): Promise<void> {
    this.held.delete(jobId);
    await this.run('select pg_advisory_unlock($1, hashtext($2))', [LEASE_SPACE, jobId]).catch(() => {});
  }

  /** Take the leases of a batch of jobs, in one statement (an action worker's batch). Never throws. */
  async holdAll(jobIds: string[]): Promise<void> {
    for (const id of jobIds) this.held.add(id);
    await this.run('select pg_try_advisory_lock($1, hashtext(id)) from unnest($2::text[]) id', [LEASE_SPACE, jobIds]).catch(() => {});
  }

  /** Release a batch's leases, in one statement. */
  async releaseAll(jobIds: string[]): Promise<void> {
    for (const id of jobIds) this.held.delete(id);
    await this.run('select pg_advisory_unlock($1, hashtext(id)) from unnest($2::text[]) id', [LEASE_SPACE, jobIds]).catch(() => {});
  }

  /** A query on the lock connection, after the ones before it; rejects when there is no connection. */
  private run(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    const c = this.client;
    if (!c) return Promise.reject(new Error('no lock connection'));
    const next = this.queue.then(() => c.query(sql, params));
    this.queue = next.catch(() => {});
    return next;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.reconnectTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const c = sessionClient({ connectionString: sessionUrlOf(this.o.url), application_name: 'bootorch-leases' }); // 'end' follows an error; reconnect there
    c.on('end', () => {
      if (this.client === c) this.client = undefined;
      this.scheduleReconnect();
    });
    await c.connect();
    await c.query('select pg_try_advisory_lock($1, hashtext(id)) from unnest($2::text[]) id', [LEASE_SPACE, [...this.held]]);
    this.client = c;
    this.connectedAt = Date.now();
    // What was seen unlocked before the connection was lost proves nothing now.
    this.suspects = new Set();
    this.backoffMs = 200;
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => {
        // Half a second apart at most: back well within the others' quiet period, so no one reaps its jobs.
        this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
        this.scheduleReconnect();
      });
    }, this.backoffMs);
  }

  /** Fail active jobs no process holds (seen so twice in a row), then tell the caller which queues. */
  private async reap(boss: PgBoss, onReaped: (queues: string[]) => Promise<void>): Promise<void> {
    if (this.reaping || this.stopped || !this.client) return;
    this.reaping = true;
    try {
      // On the lock connection: the locks it holds itself are granted there too.
      const unleased = await unleasedActiveJobs(
        { executeSql: (text, values) => this.run(text, values) },
        this.o.queuePrefix,
        this.o.graceSeconds ?? 1,
        LEASE_SPACE,
      );
      const orphans = unleased.filter((x) => !this.held.has(x.id));
      const quietOver = Date.now() - this.connectedAt >= (this.o.quietAfterConnectMs ?? QUIET_AFTER_CONNECT_MS);
      const confirmed = quietOver ? orphans.filter((x) => this.suspects.has(x.id)) : [];
      this.suspects = new Set(orphans.map((x) => x.id));
      if (confirmed.length === 0) return;
      const byQueue = new Map<string, string[]>();
      for (const x of confirmed) byQueue.set(x.name, [...(byQueue.get(x.name) ?? []), x.id]);
      // One statement per queue; an action job failed here is retried by pg-boss (its retry policy).
      for (const [name, ids] of byQueue) {
        await failJobs(
          boss,
          boss.getDb(),
          name,
          ids,
          { reason: 'the process running this job is gone (its lease lock was released)' },
          JOB_RETRY_MAX_DELAY,
        );
        countReaped(name, ids.length);
      }
      this.o.log.warn({ jobs: confirmed.length, queues: [...byQueue.keys()] }, 'reaped jobs of a process that is gone');
      await onReaped([...byQueue.keys()]);
    } catch (e) {
      this.o.log.debug({ err: String(e) }, 'tick reaper: skipped a round');
    } finally {
      this.reaping = false;
      this.rounds++;
    }
  }
}
