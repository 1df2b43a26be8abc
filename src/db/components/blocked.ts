/**
 * A running session's nodes that carry a failure reason but have not failed: held up by a failing
 * outside service (domain/blocked.ts says which), or between attempts of an action that failed. The
 * session view shows them as such, never as failures. One grouped statement over the session's
 * enabled nodes (components_session_idx), whatever their number.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { POWER_UNKNOWN_CAUSES } from '../../domain/readings.ts';
import { OUTSIDE_SERVICES } from '../../domain/blocked.ts';
import { MAX_IDS_PER_GROUP, componentGroup, type ComponentGroup } from '../../domain/session-status.ts';
import type { SessionKey } from '../sessions/rows.ts';
import { arrayParam } from '../sql.ts';

export interface BlockedGroup {
  service: string;
  reason: string;
  since: Date | null;
  count: number;
  ids: string[];
  error: string;
}

export interface SessionTroubles {
  blocked: BlockedGroup[];
  retrying: ComponentGroup[];
}

/** domain/blocked.ts blockingService, in SQL (for the session's enabled, not failed nodes). */
const SERVICE = sql`case
  when status = 'on_hold' and failure_reason = 'local_resources' then 'bootorch'
  when status = 'on_hold' and failure_reason = any(${arrayParam(POWER_UNKNOWN_CAUSES, 'text')}) then 'BMC'
  when failure_reason = 'service_unavailable' and split_part(error, ' ', 1) = any(${arrayParam(OUTSIDE_SERVICES, 'text')})
    then split_part(error, ' ', 1)
  end`;

export async function sessionTroubles(db: Db, key: SessionKey): Promise<SessionTroubles> {
  const r = await db.execute<{
    service: string | null;
    reason: string;
    count: number;
    ids: string[];
    error: string;
    since: Date | null;
  }>(sql`
    select ${SERVICE} as service, failure_reason as reason, count(*)::int as count,
      (array_agg(id order by id))[1:${sql.raw(String(MAX_IDS_PER_GROUP))}] as ids, min(error) as error, min(power_unknown_since) as since
    from components
    where session = ${key.name} and session_tenant = ${key.tenantKey} and enabled and status <> 'failed' and failure_reason <> ''
    group by 1, 2 order by 3 desc, 1, 2`);
  const blocked: BlockedGroup[] = [];
  const retrying: ComponentGroup[] = [];
  for (const g of r.rows) {
    if (g.service === null) retrying.push(componentGroup(g.reason, g.count, g.ids));
    else
      blocked.push({
        service: g.service,
        reason: g.reason,
        count: g.count,
        ids: g.ids,
        error: g.error,
        since: g.since ? new Date(g.since) : g.reason !== 'service_unavailable' ? null : await outageSince(db, g.ids, g.service),
      });
  }
  return { blocked, retrying };
}

/**
 * When these nodes started waiting on `service`: the earliest, over them, of each node's first error
 * naming the service since its last transition, report or setup (the status pass writes an error once
 * per outage, not per tick, so this is when the node first hit it). Null when no such event is kept.
 */
export async function outageSince(db: Db, ids: readonly string[], service: string): Promise<Date | null> {
  if (ids.length === 0) return null;
  const r = await db.execute<{ since: Date | null }>(sql`
    select min(x.since) as since from unnest(${arrayParam(ids, 'text')}) as n(id) cross join lateral (
      select min(e.at) as since from component_events e
      where e.component_id = n.id and e.kind = 'error' and e.error like ${`${service} %`}
        and e.id > coalesce((select max(p.id) from component_events p
          where p.component_id = n.id and p.kind in ('transition', 'report', 'setup')), 0)
    ) x`);
  const since = r.rows[0]?.since;
  return since ? new Date(since) : null;
}
