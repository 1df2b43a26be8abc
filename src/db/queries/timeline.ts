/** The per-node timeline, by node or by session, oldest first, keyset-paged on the event id. */
import type { Queryable } from '../queryable.ts';

export interface TimelineQuery {
  componentId: string | null;
  session: string | null;
  /** The caller's tenant key; null = every tenant (admin view). Tenants see only their sessions' events and their nodes. */
  tenantKey: string | null;
  after: string | null;
  limit: number;
}

export async function timeline(q: Queryable, t: TimelineQuery): Promise<Array<Record<string, unknown>>> {
  const r = await q.query(`
    select id as cursor, at, component_id, session, kind, actor, from_phase, to_phase, from_status, to_status, action,
      error, reason
    from component_events e
    where ($1::text is null or e.component_id = $1)
      and ($2::text is null or e.session = $2)
      and ($3::text is null or e.session_tenant = $3
           or exists (select 1 from tenant_xnames x where x.tenant = $3 and x.xname = e.component_id))
      and ($4::bigint is null or e.id > $4)
    order by e.id limit $5`, [t.componentId, t.session, t.tenantKey, t.after, t.limit]);
  return r.rows;
}
