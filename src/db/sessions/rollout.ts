/**
 * Rollout gate SQL: per running session with gated nodes, how many are in flight, waiting, failed,
 * and how its canary went; admission flips `queued` nodes (FIFO by queued_seq) to active.
 */
import { and, eq, gt, isNotNull, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { componentEvents, components, sessions } from '../schema.ts';
import { appendEvents } from '../events.ts';
import { parseStoredRollout, type RolloutPolicy } from '../../domain/rollout-policy.ts';

export interface GateState {
  tenantKey: string;
  name: string;
  rollout: RolloutPolicy | null;
  paused: boolean;
  /** A resume accepted the canary. */
  canaryAccepted: boolean;
  /** Failed nodes when the session was last resumed. */
  failedAtResume: number;
  managed: number;
  queued: number;
  inFlight: number;
  failed: number;
  canaryDone: number;
  canaryFailed: number;
  /** The session's stored trace context (W3C traceparent): its log lines carry its trace id. */
  traceContext: string | null;
}

const count = (where: ReturnType<typeof sql>) => sql<number>`count(${components.id}) filter (where ${where})::int`;
const inCanary = sql`${components.queuedSeq} <= coalesce((${sessions.rollout}->>'canary')::int, 0)`;

/** Running sessions that have a rollout policy (gated or with a failure budget). */
export async function gateStates(db: Db): Promise<GateState[]> {
  const rows = await db
    .select({
      tenantKey: sessions.tenantKey,
      name: sessions.name,
      rollout: sessions.rollout,
      paused: sessions.paused,
      canaryAccepted: sessions.canaryAccepted,
      failedAtResume: sessions.failedAtResume,
      traceContext: sessions.traceContext,
      managed: sql<number>`count(${components.id})::int`,
      queued: count(sql`${components.enabled} and ${components.status} = 'queued'`),
      inFlight: count(sql`${components.enabled} and ${components.status} <> 'queued'`),
      failed: count(sql`${components.status} = 'failed'`),
      canaryDone: count(sql`${inCanary} and not ${components.enabled} and ${components.status} <> 'failed'`),
      canaryFailed: count(sql`${inCanary} and ${components.status} = 'failed'`),
    })
    .from(sessions)
    .innerJoin(components, and(eq(components.session, sessions.name), eq(components.sessionTenant, sessions.tenantKey)))
    .where(and(eq(sessions.status, 'running'), isNotNull(sessions.rollout), eq(sessions.aborted, false)))
    .groupBy(
      sessions.tenantKey,
      sessions.name,
      sessions.rollout,
      sessions.paused,
      sessions.canaryAccepted,
      sessions.failedAtResume,
      sessions.traceContext,
    );
  return rows.map((r) => ({ ...r, rollout: parseStoredRollout(r.rollout) }));
}

/** Admit up to `n` queued nodes of the session, lowest queued_seq first. */
export async function admit(db: Db, tenantKey: string, name: string, n: number, actor: string): Promise<string[]> {
  if (n <= 0) return [];
  const rows = await db
    .update(components)
    .set({ statusOverride: 'on_hold', updatedAt: sql`now()` })
    .where(sql`${components.id} in (select id from components where session = ${name} and session_tenant = ${tenantKey}
      and enabled and status_override = 'queued' order by queued_seq, id limit ${n} for update skip locked)`)
    .returning({ id: components.id, queuedSeq: components.queuedSeq });
  const ids = rows.sort((a, b) => Number(a.queuedSeq) - Number(b.queuedSeq)).map((x) => x.id);
  await appendEvents(
    db,
    ids.map((id) => ({
      componentId: id,
      session: name,
      sessionTenant: tenantKey,
      kind: 'rollout' as const,
      actor,
      fromStatus: 'queued',
      toStatus: 'on_hold',
      reason: null,
      data: { admitted: true },
    })),
  );
  return ids;
}

/** Power-on calls made for a session's nodes in the last `seconds` (from the event log). */
export async function recentPowerOns(db: Db, tenantKey: string, session: string, seconds: number): Promise<number> {
  const [r] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(componentEvents)
    .where(
      and(
        eq(componentEvents.session, session),
        eq(componentEvents.sessionTenant, tenantKey),
        eq(componentEvents.kind, 'action'),
        eq(componentEvents.action, 'powering_on'),
        gt(componentEvents.at, sql`now() - make_interval(secs => ${seconds})`),
      ),
    );
  return r?.n ?? 0;
}
