/**
 * Session extended status (reference §2.2), aggregated in SQL: three grouped queries over the
 * session's components, whatever their number. Completing a session (lifecycle.ts completeSession)
 * saves the snapshot; the API shows the snapshot from then on.
 */
import { DEPLOY_PHASES } from '../../domain/deploy-decision.ts';
import { and, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { databaseNow, type Db } from '../client.ts';
import { components, sessionStatusSnapshots, type SessionRow } from '../schema.ts';
import { componentDeploys } from '../deploys.ts';
import {
  buildExtendedStatus,
  componentGroup,
  MAX_IDS_PER_GROUP,
  type ComponentGroup,
  type SessionExtendedStatus,
  type StatusCounts,
} from '../../domain/session-status.ts';
import type { SessionStateName } from '../../domain/sessions.ts';
import { getSession, type SessionKey } from './rows.ts';
import { visibleTo } from '../tenants.ts';

export type { SessionKey };

/**
 * The one rule for "this node is done and succeeded" (domain/session-status.ts), in SQL because
 * the counts are aggregated over whole sessions. The computed status alone says `stable` for a node
 * in a disk deploy phase and for an enabled node the status operator has not decided yet; only the
 * decision that the node reached its desired state (rows 1, 4b, 4c: phase '' and disabled) makes it
 * done, and a deploy of its session that is neither active nor failed means it is not. Also what
 * resets a node's run of failed sessions (db/components/quarantine.ts).
 */
export const succeeded = sql`${components.status} = 'stable' and ${components.phase} = '' and not ${components.enabled}
  and not exists (select 1 from ${componentDeploys} d where d.id = ${components.id}
    and d.session = ${components.session} and d.session_tenant = ${components.sessionTenant}
    and d.state not in ('active', 'failed'))`;

/** The database's time: a session's times are its stamps, so its duration is measured on its clock. */
const clockOf = async (db: Db) => new Date(await databaseNow(db));

/**
 * Computed now from the components; null when there is no such session. `session`: the row as the
 * caller already read it, so that the status says what that read said (see readSessionStatus).
 * `at` (default: the database's time) ends a live session's duration.
 */
export async function computeSessionStatus(
  db: Db,
  key: SessionKey,
  at?: Date,
  session?: SessionRow,
): Promise<SessionExtendedStatus | null> {
  const s = session ?? (await getSession(db, key.tenantKey, key.name));
  if (!s) return null;
  const now = at ?? (await clockOf(db));
  const c = await readStatusCounts(db, key);
  const owned = ownedBy(key);
  const errors = await groups(db, owned, components.error);
  // Failures are the nodes that are done (failed, or disabled with a reason); a node still worked on
  // (blocked by an outside service, between attempts) is no failure yet (db/components/blocked.ts).
  const reasons = await groups(
    db,
    and(owned, sql`(not ${components.enabled} or ${components.status} = 'failed')`)!,
    components.failureReason,
  );
  return buildExtendedStatus(
    {
      name: s.name,
      status: s.status as SessionStateName,
      startTime: s.startTime,
      endTime: s.endTime,
      paused: s.paused,
      pauseReason: s.pauseReason,
    },
    c,
    errors,
    reasons,
    now,
  );
}

const ownedBy = (key: SessionKey) => and(eq(components.session, key.name), eq(components.sessionTenant, key.tenantKey))!;

/** The session's components counted by outcome and phase (what its percentages are made of). */
export async function readStatusCounts(db: Db, key: SessionKey): Promise<StatusCounts> {
  // C: owned components (the session's tenant is stamped on them). S: components it staged; the staged
  // name carries no tenant, so a tenant session counts only its tenant's nodes (BOS 2.50).
  const owned = ownedBy(key);
  const stagedVisible = visibleTo(key.tenantKey === '' ? null : key.tenantKey, sql`c.id`);
  const inPhase = (...phases: string[]) => sql<number>`count(*) filter (where ${components.enabled}
    and ${components.statusOverride} <> 'on_hold' and ${components.phase} = any(${sql.param(phases)}::text[]))::int`;
  const [c] = await db
    .select({
      owned: sql<number>`count(*)::int`,
      successful: sql<number>`count(*) filter (where ${succeeded})::int`,
      failed: sql<number>`count(*) filter (where ${components.status} = 'failed')::int`,
      poweringOn: inPhase('powering_on'),
      poweringOff: inPhase('powering_off'),
      configuring: inPhase('configuring'),
      deploying: inPhase(...DEPLOY_PHASES),
      staged: sql<number>`(select count(*)::int from components c where c.staged_session = ${key.name} and ${stagedVisible})`,
    })
    .from(components)
    .where(owned);
  return c!;
}

/** Owned components grouped by a non-empty text column: count and the first ids (largest group first). */
async function groups(db: Db, owned: SQL, column: AnyColumn): Promise<ComponentGroup[]> {
  // The first ids of each group come from a window over the group (row_number), which the builder has no word for.
  const r = await db.execute<{ key: string; count: number; ids: string[] }>(sql`
    select key, count(*)::int as count, array_agg(id order by id) filter (where rn <= ${MAX_IDS_PER_GROUP}) as ids
    from (select ${column} as key, ${components.id} as id, row_number() over (partition by ${column} order by ${components.id}) as rn
          from ${components} where ${owned} and ${column} <> '') g
    group by key order by count(*) desc, key`);
  return r.rows.map((g) => componentGroup(g.key, g.count, g.ids));
}

/** Compute and save (replace) the snapshot, at `now` (default: the database's time); returns it, or null when there is no such session. */
export async function saveSessionStatusSnapshot(db: Db, key: SessionKey, at?: Date): Promise<SessionExtendedStatus | null> {
  const now = at ?? (await clockOf(db));
  const status = await computeSessionStatus(db, key, now);
  if (!status) return null;
  const saved = { ...status, savedAt: now.toISOString() };
  await db
    .insert(sessionStatusSnapshots)
    .values({ tenantKey: key.tenantKey, name: key.name, data: saved, savedAt: now })
    .onConflictDoUpdate({
      target: [sessionStatusSnapshots.tenantKey, sessionStatusSnapshots.name],
      set: { data: saved, savedAt: now },
    });
  return saved;
}

export async function getSessionStatusSnapshot(db: Db, key: SessionKey): Promise<SessionExtendedStatus | null> {
  const rows = await db
    .select({ data: sessionStatusSnapshots.data })
    .from(sessionStatusSnapshots)
    .where(and(eq(sessionStatusSnapshots.tenantKey, key.tenantKey), eq(sessionStatusSnapshots.name, key.name)));
  const snap = rows[0]?.data;
  // Saved before disk deploys: no percentDeploying.
  return snap ? { ...snap, phases: { ...snap.phases, percentDeploying: snap.phases.percentDeploying ?? 0 } } : null;
}

/**
 * What the API shows (BOS GET .../status): the snapshot of a complete session if saved, else live.
 * The session row is read once: a status computed after a second read could say `complete` (the
 * session completed in between) without the snapshot's `savedAt`, and sessionProgress ends on it.
 * The snapshot commits with the completion, so a row read as complete always finds it.
 */
export async function readSessionStatus(db: Db, key: SessionKey): Promise<SessionExtendedStatus | null> {
  const [s, now] = await Promise.all([getSession(db, key.tenantKey, key.name), clockOf(db)]);
  if (!s) return null;
  if (s.status === 'complete') {
    const snap = await getSessionStatusSnapshot(db, key);
    if (snap) return snap;
  }
  return computeSessionStatus(db, key, now, s);
}
