/**
 * The machine map's snapshot: every visible component's status, phase, session and failure reason,
 * in id order, as columns of small integers into dictionaries (the GraphQL MachineMap). A row per
 * component with its id repeated in every object costs 180 bytes a node in JSON; this costs the id
 * and four small numbers.
 */
import { asc } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components } from '../schema.ts';
import { visibleTo } from '../tenants.ts';

export interface MachineMapColumns {
  ids: string[];
  status: number[];
  statuses: string[];
  phase: number[];
  phases: string[];
  session: number[];
  sessions: string[];
  failureReason: number[];
  failureReasons: string[];
}

/** Values to indexes into a dictionary built as they come; `first` is entry 0 ('' for "none"). */
function dictionary(first?: string) {
  const values: string[] = first === undefined ? [] : [first];
  const index = new Map(values.map((v, i) => [v, i]));
  return {
    values,
    of(v: string): number {
      let i = index.get(v);
      if (i === undefined) {
        i = values.length;
        values.push(v);
        index.set(v, i);
      }
      return i;
    },
  };
}

export async function readMachineMap(db: Db, tenant: string | null): Promise<MachineMapColumns> {
  const rows = await db
    .select({
      id: components.id,
      status: components.status,
      phase: components.phase,
      session: components.session,
      reason: components.failureReason,
    })
    .from(components)
    .where(tenant === null ? undefined : visibleTo(tenant, components.id))
    .orderBy(asc(components.id));
  const statuses = dictionary();
  const phases = dictionary();
  const sessions = dictionary('');
  const reasons = dictionary('');
  const out: MachineMapColumns = {
    ids: new Array(rows.length),
    status: new Array(rows.length),
    statuses: statuses.values,
    phase: new Array(rows.length),
    phases: phases.values,
    session: new Array(rows.length),
    sessions: sessions.values,
    failureReason: new Array(rows.length),
    failureReasons: reasons.values,
  };
  rows.forEach((r, i) => {
    out.ids[i] = r.id;
    out.status[i] = statuses.of(r.status);
    out.phase[i] = phases.of(r.phase);
    out.session[i] = sessions.of(r.session);
    out.failureReason[i] = reasons.of(r.reason);
  });
  return out;
}
