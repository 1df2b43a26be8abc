/**
 * Node reports, coalesced. After a full-machine boot thousands of reporters call in within seconds;
 * one transaction per report would queue them behind the connection pool. The batcher gathers the
 * reports that arrive while a batch is being written (up to `maxBatch`) and writes them with the same
 * rules as reportBootState (BOS's 409 rule, token -> artifacts) in one transaction with one kick.
 * Each caller still gets its own result. A batch that fails is retried report by report, so one bad
 * row cannot fail the others.
 */
import type pg from 'pg';
import type { Kicker } from '../../engine/kick.ts';
import { transaction } from '../tx.ts';
import { parseComponentId } from '../../domain/xname.ts';
import { refusesActualStateWrite } from '../../domain/components.ts';
import { lockComponents } from './components.ts';
import { writeComponents } from './component-writes.ts';
import { reportBootState, type ReportInput, type ReportResult } from './report.ts';

interface Pending { input: ReportInput; id: string; resolve(r: ReportResult): void; reject(e: unknown): void }

export interface ReportBatcher {
  report(input: ReportInput): Promise<ReportResult>;
  /** Reports written in batches so far (for metrics). */
  stats(): { reports: number; batches: number };
}

export function createReportBatcher(pool: pg.Pool, kicker: Kicker, o: { maxBatch?: number } = {}): ReportBatcher {
  const maxBatch = o.maxBatch ?? 500;
  let queue: Pending[] = [];
  let running = false;
  let reports = 0;
  let batches = 0;

  const flush = async () => {
    if (running) return;
    running = true;
    try {
      while (queue.length) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        try {
          const results = await writeBatch(pool, kicker, batch);
          batch.forEach((p, i) => p.resolve(results[i]!));
          batches++;
          reports += batch.length;
        } catch {
          // One report at a time, so a single bad one only fails itself.
          for (const p of batch) reportBootState(pool, kicker, p.input).then(p.resolve, p.reject);
        }
      }
    } finally {
      running = false;
    }
  };

  return {
    report(input) {
      const parsed = parseComponentId(input.id);
      if ('error' in parsed) {
        return Promise.resolve({ ok: false, code: 'NOT_FOUND', message: `no component "${input.id.slice(0, 127)}": ${parsed.error}` });
      }
      return new Promise<ReportResult>((resolve, reject) => {
        queue.push({ input, id: parsed.id, resolve, reject });
        // The first report of a quiet period goes at once; the ones arriving meanwhile form the next batch.
        void flush();
      });
    },
    stats: () => ({ reports, batches }),
  };
}

async function writeBatch(pool: pg.Pool, kicker: Kicker, batch: Pending[]): Promise<ReportResult[]> {
  return transaction(pool, async (tx) => {
    const current = new Map((await lockComponents(tx.db, [...new Set(batch.map((p) => p.id))])).map((r) => [r.id, r]));
    const results: Array<ReportResult | null> = batch.map((p) => {
      const c = current.get(p.id);
      if (!c) return { ok: false, code: 'NOT_FOUND', message: `no component "${p.id}"` };
      if (refusesActualStateWrite(c)) {
        return { ok: false, code: 'CONFLICT', message: `Actual state can not be updated: ${p.id} is ${c.status} after ${c.lastAction || 'no action'}; report again later` };
      }
      return null;
    });
    const accepted = batch.filter((_, i) => results[i] === null);
    if (accepted.length === 0) return results as ReportResult[];
    // A node reporting twice in one batch: its last report wins, as if they had come one by one.
    const writes = accepted.map((p) => ({ id: p.id, body: { actualState: { bssToken: p.input.token } }, actor: p.input.actor }));
    const r = await writeComponents(tx.db, writes, {
      mode: 'patch', actor: 'reporter', tenantKey: '', event: { kind: 'report', reason: 'node reported its boot' },
    });
    const rows = new Map(r.rows.map((row) => [row.id, row]));
    await kicker.kick(tx, ['status']);
    return batch.map((p, i) => results[i] ?? {
      ok: true as const, component: rows.get(p.id)!, tokenKnown: r.knownTokens.has(p.input.token),
    });
  });
}
