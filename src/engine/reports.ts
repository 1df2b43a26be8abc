/**
 * Node reports, coalesced. After a full-machine boot thousands of reporters call in within seconds;
 * one transaction per report would queue them behind the connection pool. The batcher gathers the
 * reports that arrive while a batch is being written (up to `maxBatch`) and writes them with
 * db/components/reports.ts in one statement (its own transaction: one round trip). Each caller still
 * gets its own result. A batch that fails is retried report by report, so one bad row cannot fail the
 * others.
 *
 * The status kick is the one write here not made in the reports' transaction: it follows the commit,
 * coalesced (one kick in flight per batcher and at most one per 100 ms; reports committed meanwhile
 * get the next one), off the reporters' path. A kick starts after the commits it answers, so the tick it starts sees those rows.
 * A kick lost to a crash between the two costs at most the status operator's polling_frequency (its
 * level-triggered tick), and a changed-only pass reads the rows whichever pass comes next. In the
 * transaction, each batch paid four more round trips (BEGIN, pg-boss's send, the kick's NOTIFY,
 * COMMIT) for a kick that a stately queue then mostly drops.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import { transaction } from '../db/tx.ts';
import { writeReports, type ReportInput, type ReportResult } from '../db/components/reports.ts';
import { parseComponentId } from '../domain/xname.ts';
import type { Scheduler } from './scheduler.ts';

export type { ReportInput, ReportResult };

interface Pending {
  input: ReportInput;
  resolve(r: ReportResult): void;
  reject(e: unknown): void;
}

export interface ReportBatcher {
  /** `log`: the caller's logger (a request's), for the report's own line (observability/reports.ts); the batcher ignores it. */
  report(input: ReportInput, log?: Logger): Promise<ReportResult>;
  /** Reports written in batches so far (for metrics). */
  stats(): { reports: number; batches: number };
}

/** A bad xname is NOT_FOUND before any SQL; otherwise the input with its canonical id. */
function canonical(input: ReportInput): ReportInput | ReportResult {
  const parsed = parseComponentId(input.id);
  if ('error' in parsed) return { ok: false, code: 'NOT_FOUND', message: `no component "${input.id.slice(0, 127)}": ${parsed.error}` };
  return { id: parsed.id, token: input.token, actor: input.actor };
}

/** Write reports in one transaction and kick status in it when any was accepted. */
async function writeBatch(db: Db, scheduler: Scheduler, batch: readonly ReportInput[]): Promise<ReportResult[]> {
  return transaction(db, async (tx) => {
    const results = await writeReports(tx, batch);
    if (results.some((r) => r.ok)) await scheduler.kick(tx, ['status']);
    return results;
  });
}

/** One report: a batch of one (the reportBootState mutation without a batcher, tools, tests). */
export async function reportBootState(db: Db, scheduler: Scheduler, input: ReportInput): Promise<ReportResult> {
  const c = canonical(input);
  if (!('token' in c)) return c;
  return (await writeBatch(db, scheduler, [c]))[0]!;
}

/**
 * Kicks status after commits, one at a time and at most one per `gapMs`: a request while one is in
 * flight, or within `gapMs` of the last, makes one more when the gap is over. A kick is two statements
 * (pg-boss's send and the NOTIFY) for a tick that status's stately queue mostly drops while a pass
 * runs, so one per report batch was hundreds a second for nothing; a report now waits at most `gapMs`
 * more before status looks at it.
 */
function coalescedKick(db: Db, scheduler: Scheduler, gapMs: number): () => void {
  let busy = false;
  let again = false;
  const run = () => {
    busy = true;
    again = false;
    const started = performance.now();
    // A failed kick is covered by status's own periodic tick (polling_frequency).
    void scheduler
      .kick(db, ['status'])
      .catch(() => {})
      .finally(() => {
        setTimeout(
          () => {
            busy = false;
            if (again) run();
          },
          Math.max(0, started + gapMs - performance.now()),
        );
      });
  };
  return () => {
    if (busy) again = true;
    else run();
  };
}

export function createReportBatcher(
  db: Db,
  scheduler: Scheduler,
  o: { maxBatch?: number; concurrency?: number; kickGapMs?: number } = {},
): ReportBatcher {
  const maxBatch = o.maxBatch ?? 500;
  const kick = coalescedKick(db, scheduler, o.kickGapMs ?? 100);
  // Two batches in flight: one is written while the next one's round trips are on the wire. A node
  // in flight is never in a second batch at the same time, so its reports still land in order.
  const concurrency = o.concurrency ?? 2;
  let queue: Pending[] = [];
  const inFlight = new Set<string>();
  let running = 0;
  let reports = 0;
  let batches = 0;

  const write = async (batch: Pending[]) => {
    try {
      const results = await writeReports(
        db,
        batch.map((p) => p.input),
      );
      if (results.some((r) => r.ok)) kick();
      batch.forEach((p, i) => p.resolve(results[i]!));
      batches++;
      reports += batch.length;
    } catch {
      // One report at a time, so a single bad one only fails itself.
      await Promise.all(batch.map((p) => writeBatch(db, scheduler, [p.input]).then((r) => p.resolve(r[0]!), p.reject)));
    }
  };

  /** Start batches while there is room: each takes the oldest reports of nodes not already in flight. */
  const pump = () => {
    while (running < concurrency && queue.length) {
      const batch: Pending[] = [];
      const rest: Pending[] = [];
      const held = new Set<string>();
      for (const p of queue) {
        const id = p.input.id;
        if (batch.length < maxBatch && !inFlight.has(id) && !held.has(id)) batch.push(p);
        else {
          rest.push(p);
          held.add(id);
        }
      }
      if (!batch.length) return;
      queue = rest;
      running++;
      for (const p of batch) inFlight.add(p.input.id);
      void write(batch).finally(() => {
        running--;
        for (const p of batch) inFlight.delete(p.input.id);
        pump();
      });
    }
  };

  return {
    report(input) {
      const c = canonical(input);
      if (!('token' in c)) return Promise.resolve(c);
      return new Promise<ReportResult>((resolve, reject) => {
        queue.push({ input: c, resolve, reject });
        // The first report of a quiet period goes at once; the ones arriving meanwhile form the next batch.
        pump();
      });
    },
    stats: () => ({ reports, batches }),
  };
}
