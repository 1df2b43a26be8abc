/**
 * The status operator's write: every decision of a chunk in one UPDATE ... FROM unnest, guarded by
 * the row version read, with one event per changed component.
 */
import { sql, type AnyColumn } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components } from '../schema.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { arrayParam, rowVersion, unnestAs } from '../sql.ts';
import type { EngineComponent } from './select.ts';
import type { Decision } from '../../domain/status-decision.ts';

export interface StatusChange {
  row: EngineComponent;
  decision: Decision;
}

/** True when applying the decision would change the row (BOS sends a patch only then). */
export function changes(row: EngineComponent, d: Decision): boolean {
  return (
    row.phase !== d.phase ||
    row.statusOverride !== d.override ||
    (d.disable && row.enabled) ||
    (d.error !== undefined && d.error !== row.error) ||
    (d.reason !== undefined && d.reason !== row.failureReason) ||
    (d.lastActionFailed === true && !row.lastActionFailed) ||
    (d.resetCounters && row.powerOnAttempts + row.powerOffGracefulAttempts + row.powerOffForcefulAttempts > 0) ||
    (d.clearActual && (row.actualKernel !== '' || row.actualInitrd !== '' || row.actualKernelParameters !== '')) ||
    (d.powerUnknownSince !== undefined && d.powerUnknownSince?.getTime() !== row.powerUnknownSince?.getTime())
  );
}

/** Returns the changed components with their new computed status. */
export async function applyStatusChanges(
  db: Db,
  list: StatusChange[],
  actor: string,
): Promise<Array<{ row: EngineComponent; decision: Decision; newStatus: string }>> {
  const todo = list.filter((c) => changes(c.row, c.decision));
  if (todo.length === 0) return [];
  const col = <T>(f: (c: StatusChange) => T) => todo.map(f);
  const u = unnestAs('u', {
    id: arrayParam(
      col((c) => c.row.id),
      'text',
    ),
    version: arrayParam(
      col((c) => c.row.version),
      'text',
    ),
    phase: arrayParam(
      col((c) => c.decision.phase),
      'text',
    ),
    override: arrayParam(
      col((c) => c.decision.override),
      'text',
    ),
    disable: arrayParam(
      col((c) => c.decision.disable),
      'bool',
    ),
    error: arrayParam(
      col((c) => c.decision.error ?? null),
      'text',
    ),
    reason: arrayParam(
      col((c) => c.decision.reason ?? null),
      'text',
    ),
    la_failed: arrayParam(
      col((c) => c.decision.lastActionFailed === true),
      'bool',
    ),
    reset: arrayParam(
      col((c) => c.decision.resetCounters),
      'bool',
    ),
    clear_actual: arrayParam(
      col((c) => c.decision.clearActual),
      'bool',
    ),
    // Rows U1, U2 and the first known read after them: whether to write power_unknown_since, and what.
    set_unknown: arrayParam(
      col((c) => c.decision.powerUnknownSince !== undefined),
      'bool',
    ),
    unknown_since: arrayParam(
      col((c) => c.decision.powerUnknownSince?.toISOString() ?? null),
      'timestamptz',
    ),
  });
  const c = components;
  const unlessReset = (column: AnyColumn) => sql`case when u.reset then 0 else ${column} end`;
  const unlessCleared = (column: AnyColumn) => sql`case when u.clear_actual then '' else ${column} end`;
  const updated = await db
    .update(c)
    .set({
      phase: sql`u.phase`,
      statusOverride: sql`u.override`,
      enabled: sql`${c.enabled} and not u.disable`,
      error: sql`coalesce(u.error, ${c.error})`,
      failureReason: sql`coalesce(u.reason, ${c.failureReason})`,
      lastActionFailed: sql`${c.lastActionFailed} or u.la_failed`,
      lastActionAt: sql`case when u.la_failed and not ${c.lastActionFailed} then now() else ${c.lastActionAt} end`,
      powerOnAttempts: unlessReset(c.powerOnAttempts),
      powerOffGracefulAttempts: unlessReset(c.powerOffGracefulAttempts),
      powerOffForcefulAttempts: unlessReset(c.powerOffForcefulAttempts),
      actualKernel: unlessCleared(c.actualKernel),
      actualKernelParameters: unlessCleared(c.actualKernelParameters),
      actualInitrd: unlessCleared(c.actualInitrd),
      actualBssToken: unlessCleared(c.actualBssToken),
      actualUpdatedAt: sql`case when u.clear_actual then now() else ${c.actualUpdatedAt} end`,
      powerUnknownSince: sql`case when u.set_unknown then u.unknown_since else ${c.powerUnknownSince} end`,
      updatedAt: sql`now()`,
    })
    .from(u)
    .where(sql`${c.id} = u.id and ${rowVersion(c)} = u.version and ${c.enabled}`)
    .returning({ id: c.id, status: c.status });
  const newStatus = new Map(updated.map((x) => [x.id, x.status]));
  const applied = todo.filter((x) => newStatus.has(x.row.id)).map((x) => ({ ...x, newStatus: newStatus.get(x.row.id)! }));
  await appendEvents(
    db,
    applied.map(
      ({ row, decision, newStatus: s }): NewEvent => ({
        componentId: row.id,
        session: row.session,
        sessionTenant: row.sessionTenant,
        kind: s === 'failed' && row.status !== 'failed' ? 'failed' : 'transition',
        actor,
        fromPhase: row.phase,
        toPhase: decision.phase,
        fromStatus: row.status,
        toStatus: s,
        error: decision.error ?? null,
        reason: decision.reason || null,
        data: { rule: decision.rule, why: decision.why, ...(decision.disable ? { disabled: true } : {}) },
      }),
    ),
  );
  return applied;
}
