/**
 * The append-only component timeline. Writes are batched: one INSERT ... SELECT FROM unnest for any
 * number of events, and a NOTIFY so subscribers on every API replica read the new rows.
 */
import { sql } from 'drizzle-orm';
import type { Database } from './client.ts';

export interface NewEvent {
  componentId: string;
  session?: string;
  sessionTenant?: string;
  kind: 'transition' | 'action' | 'error' | 'report' | 'setup' | 'manual' | 'failed' | 'rollout' | 'stage';
  actor: string;
  fromPhase?: string | null;
  toPhase?: string | null;
  fromStatus?: string | null;
  toStatus?: string | null;
  action?: string | null;
  error?: string | null;
  reason?: string | null;
  data?: Record<string, unknown> | null;
}

export const EVENTS_CHANNEL = 'bootorch_events';

export async function appendEvents(db: Database, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const col = <K extends keyof NewEvent>(k: K) => sql.param(events.map((e) => (e[k] ?? null) as unknown));
  const arr = (v: unknown[]) => sql.param(v);
  await db.execute(sql`
    insert into component_events (component_id, session, session_tenant, kind, actor, from_phase, to_phase,
      from_status, to_status, action, error, reason, data)
    select * from unnest(
      ${col('componentId')}::text[], ${arr(events.map((e) => e.session ?? ''))}::text[],
      ${arr(events.map((e) => e.sessionTenant ?? ''))}::text[], ${col('kind')}::text[], ${col('actor')}::text[],
      ${col('fromPhase')}::text[], ${col('toPhase')}::text[], ${col('fromStatus')}::text[], ${col('toStatus')}::text[],
      ${col('action')}::text[], ${col('error')}::text[], ${col('reason')}::text[],
      ${arr(events.map((e) => (e.data ? JSON.stringify(e.data) : null)))}::jsonb[])`);
  // Delivered at COMMIT (never for a rolled-back write); subscribers read the log from their cursor.
  await db.execute(sql`select pg_notify(${EVENTS_CHANNEL}, '')`);
}
