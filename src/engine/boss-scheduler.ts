/**
 * The Scheduler (engine/scheduler.ts) on pg-boss: kicks and wakes are jobs of the operators' tick
 * queues and of the timer queue, action jobs and delayed decisions are jobs of the operators' job
 * queues, each enqueued on the caller's handle (inside its transaction, if it is one). A kick also
 * NOTIFYs every worker process (KickListener) so that it fetches at once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../db/client.ts';
import { groupBy } from '../domain/lists.ts';
import { JOB_RETRY_DELAY } from './action-jobs.ts';
import { bossDbOf } from './queue/jobs.ts';
import { actionQueueOf, KICK_CHANNEL, queueOf, TIMER_QUEUE } from './queue/names.ts';
import type { ActionJob, ActionOperatorName, DueComponent, DueJob, JobOperatorName, OperatorName, Scheduler } from './scheduler.ts';

/**
 * Wakes are due on this grain (ms): the wakes asked for one moment are one timer job, and none comes
 * more than this after the moment asked (whole seconds made a 1 s transit re-poll come 1 to 2 s on).
 */
const WAKE_GRAIN_MS = 100;
/** How long an action job may be active before pg-boss expires it (a dead worker's job is reaped sooner by its lease). */
export const ACTION_EXPIRE_SECONDS = 900;

/** The payload of a timer job: the operator whose tick it starts. */
export interface TimerJob {
  op: OperatorName;
}

export class BossScheduler implements Scheduler {
  private readonly dueListeners = new Set<(dueMs: number) => void>();

  constructor(private readonly boss: PgBoss) {}

  /** Hear of each wake this process schedules (its due database time, ms); returns the unsubscribe. */
  onDue(listener: (dueMs: number) => void): () => void {
    this.dueListeners.add(listener);
    return () => this.dueListeners.delete(listener);
  }

  /** Enqueue the operators' ticks and tell every worker (a write gave them work, a timer came due, the engine starts). */
  async kick(db: Db, ops: readonly OperatorName[]): Promise<void> {
    if (ops.length === 0) return;
    const unique = [...new Set(ops)];
    for (const op of unique) await this.boss.send(queueOf(op), {}, { db: bossDbOf(db) });
    // Every worker process LISTENs and fetches at once, instead of at its next 0.5 s fetch.
    await db.$client.query(`select pg_notify('${KICK_CHANNEL}', $1)`, [unique.join(',')]);
  }

  async wakeAt(db: Db, op: OperatorName, at: Date): Promise<void> {
    // The key names the moment it is due (to WAKE_GRAIN_MS), so many wakes for one moment are one timer job.
    const due = Math.ceil(at.getTime() / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
    const job: TimerJob = { op };
    await this.boss.send(TIMER_QUEUE, job, { db: bossDbOf(db), startAfter: new Date(due), singletonKey: `wake:${op}@${due}` });
    for (const l of this.dueListeners) l(due);
  }

  async poll(op: OperatorName, seconds: number): Promise<void> {
    // Relative: pg-boss adds it to the database's now(); one pending poll per operator.
    const job: TimerJob = { op };
    await this.boss.send(TIMER_QUEUE, job, { startAfter: Math.max(0.5, seconds), singletonKey: `poll:${op}` });
  }

  async enqueueActions(db: Db, op: ActionOperatorName, jobs: readonly ActionJob[]): Promise<void> {
    if (jobs.length === 0) return;
    // One insert for the whole set (pg-boss's array insert), on the deciding transaction. The ids are
    // time-ordered (UUIDv7), so the primary key (name, id) grows at its right edge: pg-boss's own
    // random v4 ids put each of a batch's rows on another index page (10,000 nodes, 20,012 jobs:
    // 1,263 -> 1,066 ms of the insert's database time, mean of 4 alternated runs). The batch's ids
    // share its millisecond and take their random bits from one fill: uuid's own v7 asks the system
    // for 16 random bytes per id (10 us each here, 0.2 s of a 10,000-node reboot's worker).
    const msecs = Date.now();
    const random = randomBytes(16 * jobs.length);
    await this.boss.insert(
      jobs.map((j, i) => ({
        id: uuidv7({ msecs, random: random.subarray(16 * i, 16 * i + 16) }),
        name: actionQueueOf(op),
        data: j,
        singletonKey: j.id,
        retryLimit: j.retryLimit,
        retryDelay: j.retryDelay,
        retryBackoff: j.retryBackoff,
        expireInSeconds: ACTION_EXPIRE_SECONDS,
      })),
      { db: bossDbOf(db) },
    );
    await db.$client.query(`select pg_notify('${KICK_CHANNEL}', $1)`, [actionQueueOf(op)]);
  }

  async decideLater(db: Db, op: JobOperatorName, rows: readonly DueComponent[], seconds: number): Promise<void> {
    if (rows.length === 0) return;
    // One job per session among the rows (they were acted on together); its key is its own, since the
    // queue's `short` policy keeps one waiting job per key.
    const jobs: DueJob[] = groupBy(rows, (r) => `${r.tenant}/${r.session}`).map((g) => ({
      due: true,
      ids: g.map((r) => r.id),
      session: g[0]!.session,
      tenant: g[0]!.tenant,
    }));
    await this.boss.insert(
      jobs.map((data) => ({
        name: actionQueueOf(op),
        data,
        singletonKey: `due:${randomUUID()}`,
        startAfter: `${Math.max(0, seconds)} seconds`,
        retryLimit: 2,
        retryDelay: JOB_RETRY_DELAY,
        expireInSeconds: ACTION_EXPIRE_SECONDS,
      })),
      { db: bossDbOf(db) },
    );
  }
}
