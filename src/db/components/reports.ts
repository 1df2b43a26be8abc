/**
 * The node reporter's write (reference §5): "this node booted with this BSS referral token", for any
 * number of reports in one transaction. The one path: a single report is a batch of one
 * (engine/reports.ts gathers the batches). The rules, BOS's:
 * - refused (409) while bootorch is mid-transition on the node (domain refusesActualStateWrite);
 * - a token bootorch recorded replaces the actual boot artifacts and stamps actual_state.last_updated;
 *   an unknown one is stored but keeps the old artifacts and timestamp (so a node booted by something
 *   else ages out);
 * - a node reporting twice in one batch: its last report wins, as if they had come one by one.
 * Repeating a report is harmless: it writes the same state again and refreshes its timestamp.
 */
import { getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type ComponentRow } from '../schema.ts';
import { refusesActualStateWrite } from '../../domain/components.ts';
import { lockComponents } from './read.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { arrayParam, unnestAs } from '../sql.ts';

export interface ReportInput {
  /** Canonical xname. */
  id: string;
  /** bss_referral_token from the node's kernel command line. */
  token: string;
  actor: string;
}

export type ReportResult =
  | { ok: true; component: ComponentRow; tokenKnown: boolean }
  | { ok: false; code: 'NOT_FOUND' | 'CONFLICT'; message: string };

/** Write the reports in the caller's transaction; one result per input, in order. */
export async function writeReports(tx: Db, reports: readonly ReportInput[]): Promise<ReportResult[]> {
  const current = new Map((await lockComponents(tx, [...new Set(reports.map((p) => p.id))])).map((r) => [r.id, r]));
  const results: Array<ReportResult | null> = reports.map((p) => {
    const c = current.get(p.id);
    if (!c) return { ok: false, code: 'NOT_FOUND', message: `no component "${p.id}"` };
    if (refusesActualStateWrite(c)) {
      return {
        ok: false,
        code: 'CONFLICT',
        message: `Actual state can not be updated: ${p.id} is ${c.status} after ${c.lastAction || 'no action'}; report again later`,
      };
    }
    return null;
  });
  const last = new Map(reports.filter((_, i) => results[i] === null).map((p) => [p.id, p]));
  if (last.size === 0) return results as ReportResult[];
  const written = await setActualTokens(tx, [...last.values()]);
  const known = new Map(written.map((x) => [x.row.id, x.known]));
  const rows = new Map(written.map((x) => [x.row.id, x.row]));
  await appendEvents(
    tx,
    [...last.values()].map((p): NewEvent => {
      const before = current.get(p.id)!;
      const after = rows.get(p.id)!;
      return {
        componentId: p.id,
        session: after.session,
        sessionTenant: after.sessionTenant,
        kind: 'report',
        actor: p.actor,
        fromPhase: before.phase,
        toPhase: after.phase,
        fromStatus: before.status,
        toStatus: after.status,
        reason: 'node reported its boot',
        data: { token: p.token, tokenKnown: known.get(p.id) === true },
      };
    }),
  );
  return reports.map((p, i) => results[i] ?? { ok: true as const, component: rows.get(p.id)!, tokenKnown: known.get(p.id) === true });
}

/** One statement for every report; returns each row as written and whether its token was known. */
async function setActualTokens(tx: Db, reports: ReportInput[]): Promise<Array<{ row: ComponentRow; known: boolean }>> {
  const u = unnestAs('u', {
    id: arrayParam(
      reports.map((p) => p.id),
      'text',
    ),
    token: arrayParam(
      reports.map((p) => p.token),
      'text',
    ),
  });
  const rows = await tx
    .update(components)
    .set({
      actualBssToken: sql`u.token`,
      actualKernel: sql`coalesce(a.kernel, ${components.actualKernel})`,
      actualKernelParameters: sql`coalesce(a.kernel_parameters, ${components.actualKernelParameters})`,
      actualInitrd: sql`coalesce(a.initrd, ${components.actualInitrd})`,
      actualUpdatedAt: sql`case when a.token is null then ${components.actualUpdatedAt} else now() end`,
      updatedAt: sql`now()`,
    })
    .from(sql`${u} left join boot_artifacts a on a.token = u.token`)
    .where(sql`${components.id} = u.id`)
    .returning({ ...getTableColumns(components), known: sql<boolean>`a.token is not null` });
  return rows.map(({ known, ...row }) => ({ row, known }));
}
