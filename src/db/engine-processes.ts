/**
 * The engine processes' heartbeats (table engine_processes): one row per running worker or dev
 * process, its beat stamped by the database's clock. The only module with SQL on this table.
 */
import { eq, sql } from 'drizzle-orm';
import type { Db } from './client.ts';
import { engineProcesses } from './schema.ts';

/** Rows not beaten for this long are deleted by the next beat of any process (seconds). */
const FORGET_AFTER_SECONDS = 24 * 3600;

export async function beat(db: Db, p: { id: string; role: string; host: string; pid: number }): Promise<void> {
  await db
    .insert(engineProcesses)
    .values(p)
    .onConflictDoUpdate({ target: engineProcesses.id, set: { beatAt: sql`now()` } });
  await db.delete(engineProcesses).where(sql`${engineProcesses.beatAt} < now() - make_interval(secs => ${FORGET_AFTER_SECONDS})`);
}

export async function forgetProcess(db: Db, id: string): Promise<void> {
  await db.delete(engineProcesses).where(eq(engineProcesses.id, id));
}

export interface EngineLiveness {
  /** Processes whose last beat is younger than `aliveSeconds`. */
  alive: number;
  /** Seconds since the newest beat of any process; null when none has ever beaten (or all were forgotten). */
  lastBeatAgeSeconds: number | null;
}

export async function engineLiveness(db: Db, aliveSeconds: number): Promise<EngineLiveness> {
  const r = await db.execute<{ alive: number; age: number | null }>(sql`select
      count(*) filter (where beat_at > now() - make_interval(secs => ${aliveSeconds}))::int as alive,
      extract(epoch from now() - max(beat_at))::float8 as age
    from ${engineProcesses}`);
  const row = r.rows[0]!;
  return { alive: row.alive, lastBeatAgeSeconds: row.age === null ? null : Math.max(0, row.age) };
}
