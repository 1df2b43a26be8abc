/**
 * Disk deploys in flight: one row per component a session deploys to disk (domain/deploy.ts), with
 * what the boot set asked for, where the deploy is, the agent's last heartbeat and when each state
 * was first reached (the phase timings). The only module with SQL on this table.
 */
import { and, sql } from 'drizzle-orm';
import { pgTable, text, timestamp, jsonb, check } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';
import { anyOf, fromExcluded, insertInChunks } from './sql.ts';
import { transaction } from './tx.ts';
import type { DeployRecord, DeployState } from '../domain/deploy.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const componentDeploys = pgTable(
  'component_deploys',
  {
    /** The component (xname). */
    id: text('id').primaryKey(),
    /** The session that asked for the deploy; a heartbeat for another session's deploy is refused. */
    session: text('session').notNull(),
    sessionTenant: text('session_tenant').notNull().default(''),
    spec: jsonb('spec').notNull().$type<DeployRecord>(),
    state: text('state').notNull().$type<DeployState>().default('pending'),
    /** A domain/failures.ts reason when state is failed, else ''. */
    reason: text('reason').notNull().default(''),
    /** The agent's last message (free text, for people). */
    message: text('message').notNull().default(''),
    heartbeatAt: ts('heartbeat_at'),
    /** When the current state was entered. */
    stateAt: ts('state_at').notNull().defaultNow(),
    /** state -> ISO time it was first reached (the timeline's phase timings). */
    reached: jsonb('reached').notNull().$type<Record<string, string>>().default({}),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** When the deploy budget let this pending deploy's node power on (admitDeploys); null: waiting. */
    admittedAt: ts('admitted_at'),
  },
  (t) => [
    check(
      'component_deploys_state_ck',
      sql`${t.state} in ('pending','starting','downloading','verifying','writing','written','booting_disk','active','failed')`,
    ),
  ],
);

export type DeployRow = typeof componentDeploys.$inferSelect;

/**
 * Session setup: the nodes it deploys get a fresh pending deploy; its other nodes lose any deploy an
 * earlier session left (they boot diskless now).
 */
export async function setDeploys(
  db: Db,
  session: { name: string; tenantKey: string },
  nodes: Array<{ id: string; deploy?: DeployRecord }>,
): Promise<void> {
  const deploying = nodes.filter((n): n is { id: string; deploy: DeployRecord } => n.deploy !== undefined);
  const others = nodes.filter((n) => n.deploy === undefined).map((n) => n.id);
  const now = new Date().toISOString();
  await transaction(db, async (tx) => {
    if (others.length) await tx.delete(componentDeploys).where(anyOf(componentDeploys.id, others));
    await insertInChunks(tx, deploying, async (tx, part) => {
      await tx
        .insert(componentDeploys)
        .values(
          part.map((n) => ({
            id: n.id,
            session: session.name,
            sessionTenant: session.tenantKey,
            spec: n.deploy,
            reached: { pending: now },
          })),
        )
        .onConflictDoUpdate({
          target: componentDeploys.id,
          set: {
            ...fromExcluded(componentDeploys, ['session', 'sessionTenant', 'spec', 'reached']),
            state: 'pending',
            reason: '',
            message: '',
            heartbeatAt: null,
            admittedAt: null,
            stateAt: sql`now()`,
            createdAt: sql`now()`,
          },
        });
    });
  });
}

/** The deploys of these components, by id (components without one are absent). */
export async function deploysOf(db: Db, ids: string[]): Promise<Map<string, DeployRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select().from(componentDeploys).where(anyOf(componentDeploys.id, ids));
  return new Map(rows.map((r) => [r.id, r]));
}

export async function deployOf(db: Db, id: string): Promise<DeployRow | undefined> {
  return (await deploysOf(db, [id])).get(id);
}

/**
 * Move deploys to `state` (recording when it was first reached) and, for a heartbeat, stamp it.
 * Guarded by the states they may come from, so a late or repeated call changes nothing; returns
 * the rows changed.
 */
export async function moveDeploys(
  db: Db,
  ids: string[],
  to: { state: DeployState; reason?: string; message?: string; heartbeat?: boolean },
  from: readonly DeployState[],
): Promise<DeployRow[]> {
  if (ids.length === 0) return [];
  const d = componentDeploys;
  return db
    .update(d)
    .set({
      state: to.state,
      reason: to.reason ?? '',
      ...(to.message !== undefined ? { message: to.message } : {}),
      ...(to.heartbeat ? { heartbeatAt: sql`now()` } : {}),
      stateAt: sql`case when ${d.state} = ${to.state} then ${d.stateAt} else now() end`,
      reached: sql`case when ${d.reached} ? ${to.state} then ${d.reached}
        else ${d.reached} || jsonb_build_object(${to.state}::text, to_jsonb(now())) end`,
    })
    .where(and(anyOf(d.id, ids), anyOf(d.state, from)))
    .returning();
}

/** The deploy budget's slots, one transaction at a time across every engine process. */
const BUDGET_LOCK = sql`pg_advisory_xact_lock(hashtext('bootorch_deploy_budget'))`;

/**
 * The deploys that hold a slot of the deploy budget (domain/deploy-budget.ts), each only while it is
 * alive: admitted and not yet started (pending) within `o.bootSeconds` of its admission (the node's
 * boot into the ramdisk), or with its agent at work (starting..writing) and heard from within
 * `o.silentSeconds`. So a deploy whose image is written, or that failed, frees its slot at once, and
 * one whose agent died, or whose node never booted the ramdisk, frees it when it is that late.
 */
const holdsSlot = (o: SlotTimes) => {
  const d = componentDeploys;
  const within = (t: unknown, seconds: number) => sql`${t} > now() - make_interval(secs => ${seconds})`;
  return sql`((${d.state} = 'pending' and ${within(d.admittedAt, o.bootSeconds)})
    or (${d.state} in ('starting','downloading','verifying','writing') and ${within(sql`coalesce(${d.heartbeatAt}, ${d.stateAt})`, o.silentSeconds)}))`;
};

export interface SlotTimes {
  /** An admitted deploy whose agent has not started holds its slot this long (max_boot_wait_time). */
  bootSeconds: number;
  /** A running agent not heard from this long no longer holds its slot (deploy_heartbeat_timeout). */
  silentSeconds: number;
}

export interface Admission {
  /** Of the ids given, those whose node may power on into its deploy now (admitted now, or before and still holding). */
  admitted: string[];
  /** Of the ids given, pending deploys left waiting for a slot. */
  waiting: string[];
  /** Slots held after this admission. */
  holding: number;
}

/**
 * Admit pending deploys of these components (in the order given) while slots are free: at most
 * `slots` deploys hold one at any time (holdsSlot), counted over every session (one advisory lock serialises the
 * count and the admission). Ids without a pending deploy are in neither list. A repeated call admits
 * no one twice (a deploy still holding its slot is admitted again without taking another).
 */
export async function admitDeploys(db: Db, ids: string[], slots: number, times: SlotTimes): Promise<Admission> {
  if (ids.length === 0) return { admitted: [], waiting: [], holding: 0 };
  const d = componentDeploys;
  return transaction(db, async (tx) => {
    await tx.execute(sql`select ${BUDGET_LOCK}`);
    const holding = await tx.execute<{ id: string }>(sql`select ${d.id} as id from ${d} where ${holdsSlot(times)}`);
    const held = new Set(holding.rows.map((r) => r.id));
    const pending = await tx
      .select({ id: d.id })
      .from(d)
      .where(and(anyOf(d.id, ids), sql`${d.state} = 'pending'`));
    const pendingIds = new Set(pending.map((r) => r.id));
    const ordered = ids.filter((id) => pendingIds.has(id));
    const already = ordered.filter((id) => held.has(id));
    const room = Math.max(0, slots - held.size);
    const fresh = ordered.filter((id) => !held.has(id)).slice(0, room);
    if (fresh.length) await tx.update(d).set({ admittedAt: sql`now()` }).where(anyOf(d.id, fresh));
    const admitted = new Set([...already, ...fresh]);
    return {
      admitted: ordered.filter((id) => admitted.has(id)),
      waiting: ordered.filter((id) => !admitted.has(id)),
      holding: held.size + fresh.length,
    };
  });
}
