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
import { sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { refusesActualStateWrite } from '../../domain/components.ts';
import { insertEvents, notifyEvents } from '../events.ts';
import { arrayParam, executeNamed } from '../sql.ts';

export interface ReportInput {
  /** Canonical xname. */
  id: string;
  /** bss_referral_token from the node's kernel command line. */
  token: string;
  actor: string;
}

/** `session`: the session that owns the node, when one does (for the report's log line). */
export type ReportResult =
  | { ok: true; id: string; tokenKnown: boolean; session?: string }
  | { ok: false; code: 'NOT_FOUND' | 'CONFLICT'; message: string; session?: string };

/**
 * refusesActualStateWrite (the domain's rule) in SQL over the locked row `b`, for the one statement.
 * writeReports checks every row's outcome against the domain function and fails the batch if they
 * ever disagree, so the two cannot drift apart unnoticed.
 */
const REFUSED = sql.raw(`(b.enabled and b.status <> 'stable' and b.last_action <> 'powering_on')`);

/**
 * Write the reports in the caller's transaction; one result per input, in order. One statement:
 * lock the nodes (in id order, as every writer does), keep each node's last report, refuse the
 * mid-transition ones, write the rest, append their events and NOTIFY (db/events.ts).
 */
export async function writeReports(tx: Db, reports: readonly ReportInput[]): Promise<ReportResult[]> {
  if (reports.length === 0) return [];
  const param = (f: (p: ReportInput) => string) =>
    arrayParam(
      reports.map((p) => f(p)),
      'text',
    );
  const ids = [...new Set(reports.map((p) => p.id))];
  const { rows } = await executeNamed<Record<string, unknown>>(
    tx,
    'bootorch_write_reports',
    sql`
    with u as (select * from unnest(${param((p) => p.id)}, ${param((p) => p.token)}, ${param((p) => p.actor)})
        with ordinality as u(id, token, actor, ord)),
      l as (select distinct on (id) id, token, actor, min(ord) over (partition by id) as first from u order by id, ord desc),
      b as materialized (select c.* from components c where c.id = any(${arrayParam(ids, 'text')}) order by c.id for update of c),
      w as (update components c set actual_bss_token = l.token,
          actual_kernel = coalesce(a.kernel, c.actual_kernel),
          actual_kernel_parameters = coalesce(a.kernel_parameters, c.actual_kernel_parameters),
          actual_initrd = coalesce(a.initrd, c.actual_initrd),
          actual_updated_at = case when a.token is null then c.actual_updated_at else now() end,
          updated_at = now()
        from l join b on b.id = l.id left join boot_artifacts a on a.token = l.token
        where c.id = l.id and not ${REFUSED}
        returning c.id, c.session, c.session_tenant, c.phase, c.status,
          a.token is not null as known__, l.token as token__, l.actor as actor__, l.first as first__),
      ev as (${insertEvents(sql`select w.id, w.session, w.session_tenant, 'report', w.actor__, b.phase, w.phase, b.status,
          w.status, null, null, 'node reported its boot', jsonb_build_object('token', w.token__, 'tokenKnown', w.known__)
        from w join b on b.id = w.id order by w.first__`)})
    select w.id, w.known__, b.id as b_id__, b.enabled as b_enabled__, b.status as b_status__, b.last_action as b_last_action__,
      b.session as b_session__, ${notifyEvents('ev')} as notified__
    from b left join w on w.id = b.id`,
  );
  const written = new Map<string, { id: string; tokenKnown: boolean; session?: string }>();
  const refused = new Map<string, { status: string; lastAction: string; session?: string }>();
  for (const r of rows) {
    const before = { enabled: r.b_enabled__ as boolean, status: r.b_status__ as string, lastAction: r.b_last_action__ as string };
    const id = r.b_id__ as string;
    const session = r.b_session__ ? { session: r.b_session__ as string } : {};
    if (refusesActualStateWrite(before) !== (r.id == null))
      throw new Error(`report of ${id}: the statement's refusal disagrees with the domain's`);
    if (r.id == null) refused.set(id, { ...before, ...session });
    else written.set(id, { id, tokenKnown: r.known__ === true, ...session });
  }
  return reports.map((p): ReportResult => {
    const w = written.get(p.id);
    if (w) return { ok: true, ...w };
    const c = refused.get(p.id);
    if (!c) return { ok: false, code: 'NOT_FOUND', message: `no component "${p.id}"` };
    return {
      ok: false,
      code: 'CONFLICT',
      message: `Actual state can not be updated: ${p.id} is ${c.status} after ${c.lastAction || 'no action'}; report again later`,
      ...(c.session ? { session: c.session } : {}),
    };
  });
}
