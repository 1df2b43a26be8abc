/**
 * Node reports measured where every path meets: the report batcher the API's reportBootState calls.
 * Counts accepted and refused reports (by code), times each from arrival to commit, gives each a
 * `report` span (its batched transaction's work happens inside it), and at debug writes one line per
 * report with the node's xname and session on the caller's logger (a request's: with its request and
 * trace ids). Debug off, that line costs one level check.
 */
import type { Logger } from 'pino';
import type { ReportBatcher, ReportInput, ReportResult } from '../engine/reports.ts';
import { reportSeconds, reports } from './metrics.ts';
import { inSpan } from './tracing.ts';

export function observeReports(batcher: ReportBatcher): ReportBatcher {
  return {
    stats: () => batcher.stats(),
    report: (input, log) =>
      inSpan('report', {}, async (span) => {
        const end = reportSeconds.startTimer();
        try {
          const r = await batcher.report(input);
          reports.inc(r.ok ? { outcome: 'accepted', code: 'OK' } : { outcome: 'refused', code: r.code });
          span.setAttribute('bootorch.outcome', r.ok ? 'accepted' : r.code);
          if (log?.isLevelEnabled('debug')) logReport(log, input, r);
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

function logReport(log: Logger, input: ReportInput, r: ReportResult): void {
  const about = { xname: r.ok ? r.id : input.id.slice(0, 127), ...(r.session ? { session: r.session } : {}) };
  if (r.ok) log.debug({ ...about, outcome: 'accepted', tokenKnown: r.tokenKnown }, 'report: accepted');
  else log.debug({ ...about, outcome: 'refused', code: r.code }, `report: refused (${r.code})`);
}
