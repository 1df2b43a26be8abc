/**
 * Node reports measured where every path meets: the report batcher the API's reportBootState calls.
 * Counts accepted and refused reports (by code), times each from arrival to commit, and gives each a
 * `report` span (its batched transaction's work happens inside it).
 */
import type { ReportBatcher } from '../engine/reports.ts';
import { reportSeconds, reports } from './metrics.ts';
import { inSpan } from './tracing.ts';

export function observeReports(batcher: ReportBatcher): ReportBatcher {
  return {
    stats: () => batcher.stats(),
    report: (input) =>
      inSpan('report', {}, async (span) => {
        const end = reportSeconds.startTimer();
        try {
          const r = await batcher.report(input);
          reports.inc(r.ok ? { outcome: 'accepted', code: 'OK' } : { outcome: 'refused', code: r.code });
          span.setAttribute('bootorch.outcome', r.ok ? 'accepted' : r.code);
          return r;
        } catch (e) {
          reports.inc({ outcome: 'refused', code: 'ERROR' });
          throw e;
        } finally {
          end();
        }
      }),
  };
}
