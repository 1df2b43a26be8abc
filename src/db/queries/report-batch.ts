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
import { lockComponents, readComponents } from './components.ts';
import { appendEventsRaw, type NewEvent } from '../events.ts';
import type { Queryable } from '../queryable.ts';
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
    const last = new Map(accepted.map((p) => [p.id, p]));
    const written = await writeReports(tx.client, [...last.values()]);
    const rows = new Map((await readComponents(tx.db, [...last.keys()])).map((r) => [r.id, r]));
    await appendEventsRaw(tx.client, [...last.values()].map((p): NewEvent => {
      const before = current.get(p.id)!;
      const after = rows.get(p.id)!;
      return {
        componentId: p.id, session: after.session, sessionTenant: after.sessionTenant, kind: 'report', actor: p.input.actor,
        fromPhase: before.phase, toPhase: after.phase, fromStatus: before.status, toStatus: after.status,
        reason: 'node reported its boot', data: { token: p.input.token, tokenKnown: written.get(p.id) === true },
      };
    }));
    await kicker.kick(tx, ['status']);
    return batch.map((p, i) => results[i] ?? {
      ok: true as const, component: rows.get(p.id)!, tokenKnown: written.get(p.id) === true,
    });
  });
}

/**
 * The reporter's write for many nodes in one statement, with BOS's rules for a body that holds only
 * `actual_state.bss_token`: a token bootorch recorded replaces the actual boot artifacts and stamps
 * actual_state.last_updated; an unknown one is stored but keeps the old artifacts and timestamp (so a
 * node booted by something else ages out). Returns id -> whether its token was known.
 */
async function writeReports(q: Queryable, reports: Pending[]): Promise<Map<string, boolean>> {
  const r = await q.query(`
    update components c set actual_bss_token = u.token,
      actual_kernel = coalesce(a.kernel, c.actual_kernel),
      actual_kernel_parameters = coalesce(a.kernel_parameters, c.actual_kernel_parameters),
      actual_initrd = coalesce(a.initrd, c.actual_initrd),
      actual_updated_at = case when a.token is null then c.actual_updated_at else now() end,
      updated_at = now()
    from unnest($1::text[], $2::text[]) as u(id, token) left join boot_artifacts a on a.token = u.token
    where c.id = u.id
    returning c.id, a.token is not null as known`, [reports.map((p) => p.id), reports.map((p) => p.input.token)]);
  return new Map(r.rows.map((x: any) => [x.id as string, x.known as boolean]));
}
