/**
 * The status operator's write: every decision of a chunk in one UPDATE ... FROM unnest, guarded by
 * the row version read, with one event per changed component.
 */
import type { Queryable } from '../queryable.ts';
import { appendEventsRaw, type NewEvent } from '../events.ts';
import type { EngineComponent } from './components.ts';
import type { Decision } from '../../domain/status-decision.ts';

export interface StatusChange {
  row: EngineComponent;
  decision: Decision;
}

/** True when applying the decision would change the row (BOS sends a patch only then). */
export function changes(row: EngineComponent, d: Decision): boolean {
  return row.phase !== d.phase
    || row.statusOverride !== d.override
    || (d.disable && row.enabled)
    || (d.error !== undefined && d.error !== row.error)
    || (d.reason !== undefined && d.reason !== row.failureReason)
    || (d.lastActionFailed === true && !row.lastActionFailed)
    || (d.resetCounters && (row.powerOnAttempts + row.powerOffGracefulAttempts + row.powerOffForcefulAttempts) > 0)
    || (d.clearActual && (row.actualKernel !== '' || row.actualInitrd !== '' || row.actualKernelParameters !== ''));
}

/** Returns the changed components with their new computed status. */
export async function applyStatusChanges(
  q: Queryable, list: StatusChange[], actor: string,
): Promise<Array<{ row: EngineComponent; decision: Decision; newStatus: string }>> {
  const todo = list.filter((c) => changes(c.row, c.decision));
  if (todo.length === 0) return [];
  const col = <T>(f: (c: StatusChange) => T) => todo.map(f);
  const r = await q.query(
    `update components c set
       phase = u.phase,
       status_override = u.override,
       enabled = c.enabled and not u.disable,
       error = coalesce(u.error, c.error),
       failure_reason = coalesce(u.reason, c.failure_reason),
       last_action_failed = c.last_action_failed or u.la_failed,
       last_action_at = case when u.la_failed and not c.last_action_failed then now() else c.last_action_at end,
       power_on_attempts = case when u.reset then 0 else c.power_on_attempts end,
       power_off_graceful_attempts = case when u.reset then 0 else c.power_off_graceful_attempts end,
       power_off_forceful_attempts = case when u.reset then 0 else c.power_off_forceful_attempts end,
       actual_kernel = case when u.clear_actual then '' else c.actual_kernel end,
       actual_kernel_parameters = case when u.clear_actual then '' else c.actual_kernel_parameters end,
       actual_initrd = case when u.clear_actual then '' else c.actual_initrd end,
       actual_bss_token = case when u.clear_actual then '' else c.actual_bss_token end,
       actual_updated_at = case when u.clear_actual then now() else c.actual_updated_at end,
       updated_at = now()
     from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::text[], $8::bool[],
                 $9::bool[], $10::bool[])
       as u(id, version, phase, override, disable, error, reason, la_failed, reset, clear_actual)
     where c.id = u.id and c.xmin::text = u.version and c.enabled
     returning c.id, c.status`,
    [
      col((c) => c.row.id), col((c) => c.row.version), col((c) => c.decision.phase), col((c) => c.decision.override),
      col((c) => c.decision.disable), col((c) => c.decision.error ?? null), col((c) => c.decision.reason ?? null),
      col((c) => c.decision.lastActionFailed === true), col((c) => c.decision.resetCounters),
      col((c) => c.decision.clearActual),
    ],
  );
  const newStatus = new Map(r.rows.map((x: any) => [x.id as string, x.status as string]));
  const applied = todo.filter((c) => newStatus.has(c.row.id)).map((c) => ({ ...c, newStatus: newStatus.get(c.row.id)! }));
  await appendEventsRaw(q, applied.map(({ row, decision, newStatus: s }): NewEvent => ({
    componentId: row.id, session: row.session, sessionTenant: row.sessionTenant,
    kind: s === 'failed' && row.status !== 'failed' ? 'failed' : 'transition', actor,
    fromPhase: row.phase, toPhase: decision.phase, fromStatus: row.status, toStatus: s,
    error: decision.error ?? null, reason: decision.reason || null,
    data: { rule: decision.rule, why: decision.why, ...(decision.disable ? { disabled: true } : {}) },
  })));
  return applied;
}
