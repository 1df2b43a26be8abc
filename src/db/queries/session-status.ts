/**
 * Session extended status (reference §2.2), aggregated in SQL: three grouped queries over the
 * session's components, whatever their number. The engine's session-completion operator calls
 * saveSessionStatusSnapshot when a session completes; the API shows the snapshot from then on.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.ts';
import { sessionStatusSnapshots, type SessionRow } from '../schema.ts';
import {
  buildExtendedStatus, componentGroup, MAX_IDS_PER_GROUP, type ComponentGroup, type SessionExtendedStatus,
} from '../../domain/session-status.ts';
import type { SessionStateName } from '../../domain/sessions.ts';
import { getSession } from './sessions.ts';
import { visibleTo } from './tenants.ts';

export interface SessionKey {
  /** '' for an untenanted session. */
  tenantKey: string;
  name: string;
}

/**
 * Computed now from the components; null when there is no such session. `session`: the row as the
 * caller already read it, so that the status says what that read said (see readSessionStatus).
 */
export async function computeSessionStatus(db: Database, key: SessionKey, now: Date = new Date(),
  session?: SessionRow): Promise<SessionExtendedStatus | null> {
  const s = session ?? await getSession(db, key.tenantKey, key.name);
  if (!s) return null;
  // C: owned components (the session's tenant is stamped on them). S: components it staged; the staged
  // name carries no tenant, so a tenant session counts only its tenant's nodes (BOS 2.50).
  const owned = sql`c.session = ${key.name} and c.session_tenant = ${key.tenantKey}`;
  const stagedVisible = visibleTo(key.tenantKey === '' ? null : key.tenantKey, sql`c.id`);
  const counts = await db.execute(sql`
    select count(*)::int as owned,
      count(*) filter (where c.status = 'stable')::int as successful,
      count(*) filter (where c.status = 'failed')::int as failed,
      count(*) filter (where c.enabled and c.status_override <> 'on_hold' and c.phase = 'powering_on')::int as powering_on,
      count(*) filter (where c.enabled and c.status_override <> 'on_hold' and c.phase = 'powering_off')::int as powering_off,
      count(*) filter (where c.enabled and c.status_override <> 'on_hold' and c.phase = 'configuring')::int as configuring,
      (select count(*)::int from components c where c.staged_session = ${key.name} and ${stagedVisible}) as staged
    from components c where ${owned}`);
  const c = counts.rows[0] as Record<string, number>;
  const errors = await groups(db, owned, 'error');
  const reasons = await groups(db, owned, 'failure_reason');
  return buildExtendedStatus(
    { name: s.name, status: s.status as SessionStateName, startTime: s.startTime, endTime: s.endTime, paused: s.paused, pauseReason: s.pauseReason },
    { owned: c.owned!, staged: c.staged!, successful: c.successful!, failed: c.failed!, poweringOn: c.powering_on!, poweringOff: c.powering_off!, configuring: c.configuring! },
    errors, reasons, now,
  );
}

/** Owned components grouped by a non-empty text column: count and the first ids (largest group first). */
async function groups(db: Database, owned: ReturnType<typeof sql>, column: 'error' | 'failure_reason'): Promise<ComponentGroup[]> {
  const col = sql.raw(`c.${column}`);
  const r = await db.execute(sql`
    select key, count(*)::int as count, array_agg(id order by id) filter (where rn <= ${MAX_IDS_PER_GROUP}) as ids
    from (select ${col} as key, c.id, row_number() over (partition by ${col} order by c.id) as rn
          from components c where ${owned} and ${col} <> '') g
    group by key order by count(*) desc, key`);
  return (r.rows as { key: string; count: number; ids: string[] }[]).map((g) => componentGroup(g.key, g.count, g.ids));
}

/** Compute and save (replace) the snapshot; returns it, or null when there is no such session. */
export async function saveSessionStatusSnapshot(db: Database, key: SessionKey, now: Date = new Date()): Promise<SessionExtendedStatus | null> {
  const status = await computeSessionStatus(db, key, now);
  if (!status) return null;
  const saved = { ...status, savedAt: now.toISOString() };
  await db.insert(sessionStatusSnapshots)
    .values({ tenantKey: key.tenantKey, name: key.name, data: saved as unknown as Record<string, unknown>, savedAt: now })
    .onConflictDoUpdate({
      target: [sessionStatusSnapshots.tenantKey, sessionStatusSnapshots.name],
      set: { data: saved as unknown as Record<string, unknown>, savedAt: now },
    });
  return saved;
}

export async function getSessionStatusSnapshot(db: Database, key: SessionKey): Promise<SessionExtendedStatus | null> {
  const rows = await db.select({ data: sessionStatusSnapshots.data }).from(sessionStatusSnapshots)
    .where(and(eq(sessionStatusSnapshots.tenantKey, key.tenantKey), eq(sessionStatusSnapshots.name, key.name)));
  return (rows[0]?.data as unknown as SessionExtendedStatus | undefined) ?? null;
}

/**
 * What the API shows (BOS GET .../status): the snapshot of a complete session if saved, else live.
 * The session row is read once: a status computed after a second read could say `complete` (the
 * session completed in between) without the snapshot's `savedAt`, and sessionProgress ends on it.
 * The snapshot commits with the completion, so a row read as complete always finds it.
 */
export async function readSessionStatus(db: Database, key: SessionKey, now: Date = new Date()): Promise<SessionExtendedStatus | null> {
  const s = await getSession(db, key.tenantKey, key.name);
  if (!s) return null;
  if (s.status === 'complete') {
    const snap = await getSessionStatusSnapshot(db, key);
    if (snap) return snap;
  }
  return computeSessionStatus(db, key, now, s);
}
