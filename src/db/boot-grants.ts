/**
 * Boot grants (Ironic's agent token, before it is issued): one row per node and purpose while bootorch
 * expects that node to boot. Power-on opens a window (purpose `report`, or `deploy` when the node's
 * disk deploy is pending or running) for a new boot attempt; the boot script mints the attempt's
 * one-time ticket in it, a later fetch in the same window replacing a ticket not yet exchanged; the
 * node's first call exchanges the ticket once (src/api/boot/exchange.ts), which closes the window. A
 * config drive carries a ticket of purpose `disk` for the installed system. Only tickets' SHA-256 is
 * stored. Readers take a grant only while it is live (a grant whose window and ticket have both ended
 * is, to them, not there); such rows, and the credentials minted from tickets that expired or were
 * revoked, are pruned in the background, at most once a minute per process (BootGrantPruner). The
 * only module with SQL on this table.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { pgTable, text, timestamp, uniqueIndex, index, check } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';
import { apiTokens } from './schema.ts';
import { nodeInventory } from './node-inventory.ts';
import { componentDeploys } from './deploys.ts';
import { anyOf, insertInChunks } from './sql.ts';
import { inTransaction, transaction } from './tx.ts';
import { databaseErrorText } from './outage.ts';
import type { NodeScope } from '../auth/node-scopes.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const bootGrants = pgTable(
  'boot_grants',
  {
    /** The boot attempt: random, unguessable; iPXE's failure URLs carry it (failed/<attempt>/<stage>). */
    attempt: text('attempt').primaryKey(),
    /** The node's xname. */
    node: text('node').notNull(),
    /** The scope of the credential its ticket is exchanged for (auth/node-scopes.ts). */
    purpose: text('purpose').notNull().$type<NodeScope>(),
    /** Until when a ticket may be minted (and exchanged). */
    windowEndsAt: ts('window_ends_at').notNull(),
    /** SHA-256 (hex) of the live ticket; null before the boot script minted one. */
    ticketHash: text('ticket_hash'),
    ticketExpiresAt: ts('ticket_expires_at'),
    /** Set by the exchange: the ticket is spent and the window closed. */
    exchangedAt: ts('exchanged_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('boot_grants_node_purpose_idx').on(t.node, t.purpose),
    uniqueIndex('boot_grants_ticket_idx').on(t.ticketHash),
    // The grants pruneBootGrants deletes (window ended), found without reading the table.
    index('boot_grants_window_ends_idx').on(t.windowEndsAt),
    check('boot_grants_purpose_ck', sql`${t.purpose} in ('report','deploy','disk')`),
  ],
);

export type BootGrantRow = typeof bootGrants.$inferSelect;

/** The purposes a power-on opens (one of them per node at a time); `disk` comes with the config drive. */
const NETBOOT: NodeScope[] = ['report', 'deploy'];
/** Deploy states in which a power-on boots the deploy ramdisk. */
const DEPLOYING = ['pending', 'starting', 'downloading', 'verifying', 'writing'];

/**
 * Open a boot window for each node (a power-on bootorch makes): a new attempt per node replacing
 * the node's earlier one and its ticket. Also revokes the node credentials earlier attempts issued
 * (report and deploy scopes): a new boot attempt ends the old ones. Returns the ids of the revoked
 * tokens (for the token caches: auth/token-rows.ts's forgetTokens).
 */
export async function openBootWindows(
  db: Db,
  ids: string[],
  o: { windowSeconds: number; now: Date; attempt: () => string },
): Promise<string[]> {
  if (ids.length === 0) return [];
  const revoked = await transaction(db, async (tx) => {
    const deploying = new Set(
      (
        await tx
          .select({ id: componentDeploys.id })
          .from(componentDeploys)
          .where(and(anyOf(componentDeploys.id, ids), anyOf(componentDeploys.state, DEPLOYING)))
      ).map((r) => r.id),
    );
    await tx.delete(bootGrants).where(and(anyOf(bootGrants.node, ids), anyOf(bootGrants.purpose, NETBOOT)));
    const ends = new Date(o.now.getTime() + o.windowSeconds * 1000);
    await insertInChunks(tx, ids, async (tx, part) => {
      await tx.insert(bootGrants).values(
        part.map((id) => ({
          attempt: o.attempt(),
          node: id,
          purpose: (deploying.has(id) ? 'deploy' : 'report') as NodeScope,
          windowEndsAt: ends,
          createdAt: o.now,
        })),
      );
    });
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: o.now })
      .where(and(eq(apiTokens.role, 'node'), anyOf(apiTokens.subject, ids), anyOf(apiTokens.scope, NETBOOT), isNull(apiTokens.revokedAt)))
      .returning({ id: apiTokens.id });
    return revoked.map((r) => r.id);
  });
  bootGrantPruner.soon(db, o.now);
  return revoked;
}

/** What the boot script needs from the node whose window it minted a ticket in. */
export interface MintedTicket {
  attempt: string;
  purpose: NodeScope;
  node: string;
  bootKernel: string;
  bootInitrd: string;
  bootParams: string;
  bootToken: string;
}

/**
 * The boot script's one statement: for the enabled node with this MAC, with boot parameters, whose
 * window is open and not exchanged, and whose deploy (if any) has not gone to its disk, store this
 * ticket's hash (replacing an unexchanged one) and return what the script needs. Undefined for every
 * other case alike (unknown MAC, disabled, outside the window, deployed to disk), so the answers
 * cannot tell them apart, nor can the time taken (one statement either way).
 */
export async function mintBootTicket(
  db: Db,
  mac: string,
  ticket: { hash: string; expiresAt: Date; now: Date },
): Promise<MintedTicket | undefined> {
  const n = nodeInventory;
  const g = bootGrants;
  const d = componentDeploys;
  const [row] = await db
    .update(g)
    .set({ ticketHash: ticket.hash, ticketExpiresAt: ticket.expiresAt })
    .from(n)
    .where(
      and(
        eq(n.mac, mac),
        eq(n.enabled, true),
        sql`${n.bootKernel} <> ''`,
        eq(g.node, n.id),
        anyOf(g.purpose, NETBOOT),
        sql`${g.windowEndsAt} > ${ticket.now}`,
        isNull(g.exchangedAt),
        sql`not exists (select 1 from ${d} where ${d.id} = ${n.id} and ${d.state} in ('booting_disk','active'))`,
      ),
    )
    .returning({
      attempt: g.attempt,
      purpose: g.purpose,
      node: n.id,
      bootKernel: n.bootKernel,
      bootInitrd: n.bootInitrd,
      bootParams: n.bootParams,
      bootToken: n.bootToken,
    });
  return row;
}

/**
 * A grant with its ticket at once, its window ending with the ticket: the installed system's (purpose
 * disk, written into the config drive; exchangeable once bootorch has switched the deploy to its
 * disk), or a simulated node's boot ticket (the simulator has no boot script). Replaces the node's
 * earlier grant of that purpose.
 */
export async function issueTicket(
  db: Db,
  node: string,
  purpose: NodeScope,
  ticket: { hash: string; expiresAt: Date; now: Date; attempt: string },
): Promise<void> {
  await transaction(db, async (tx) => {
    await tx.delete(bootGrants).where(and(eq(bootGrants.node, node), eq(bootGrants.purpose, purpose)));
    await tx.insert(bootGrants).values({
      attempt: ticket.attempt,
      node,
      purpose,
      windowEndsAt: ticket.expiresAt,
      ticketHash: ticket.hash,
      ticketExpiresAt: ticket.expiresAt,
      createdAt: ticket.now,
    });
  });
  bootGrantPruner.soon(db, ticket.now);
}

/**
 * The grant a ticket (by hash) belongs to, locked for the exchange; undefined when unknown or when its
 * window and ticket have both ended (a row pruning would delete reads as pruned).
 */
export async function grantOfTicket(db: Db, hash: string, now: Date): Promise<BootGrantRow | undefined> {
  const [row] = await db
    .select()
    .from(bootGrants)
    .where(and(eq(bootGrants.ticketHash, hash), sql`not (${grantEnded(now)})`))
    .for('update');
  return row;
}

/** Spend a grant's ticket (the exchange): true when it was live and is now spent. */
export async function spendTicket(db: Db, attempt: string, now: Date): Promise<boolean> {
  const rows = await db
    .update(bootGrants)
    .set({ exchangedAt: now })
    .where(
      and(
        eq(bootGrants.attempt, attempt),
        isNull(bootGrants.exchangedAt),
        sql`${bootGrants.ticketExpiresAt} > ${now}`,
        sql`${bootGrants.windowEndsAt} > ${now}`,
      ),
    )
    .returning({ attempt: bootGrants.attempt });
  return rows.length > 0;
}

/** A network-boot attempt whose window is open and whose ticket is not spent (iPXE's failure reports). */
export async function openAttempt(db: Db, attempt: string, now: Date): Promise<BootGrantRow | undefined> {
  const [row] = await db
    .select()
    .from(bootGrants)
    .where(
      and(
        eq(bootGrants.attempt, attempt),
        anyOf(bootGrants.purpose, NETBOOT),
        sql`${bootGrants.windowEndsAt} > ${now}`,
        isNull(bootGrants.exchangedAt),
      ),
    );
  return row;
}

/** Grants whose window and ticket have both ended (found by boot_grants_window_ends_idx). */
const grantEnded = (now: Date) =>
  sql`${bootGrants.windowEndsAt} <= ${now} and (${bootGrants.ticketExpiresAt} is null or ${bootGrants.ticketExpiresAt} <= ${now})`;

/**
 * Node credentials minted from tickets that expired or were revoked (found by
 * api_tokens_ticket_expiry_idx and api_tokens_ticket_revoked_idx). A provisioned node token, without a
 * scope, is an admin's to revoke and list, and stays.
 */
const tokenSpent = (now: Date) =>
  sql`${apiTokens.role} = 'node' and ${apiTokens.scope} is not null and (${apiTokens.expiresAt} <= ${now} or ${apiTokens.revokedAt} is not null)`;

/**
 * pruneBootGrants's two statements, at most `max` rows each. PostgreSQL's DELETE has no LIMIT: the
 * rows are picked from the indexes by a subquery, run once, and deleted by their tuple ids. A join back
 * on the key instead lets the planner rescan the subquery for every row when the table's statistics
 * predate the rows' expiry. A row changed since it was picked is left to the next prune.
 */
export function pruneStatements(now: Date, max: number) {
  return {
    grants: sql`delete from ${bootGrants} where ctid = any(array(
      select ctid from ${bootGrants} where ${grantEnded(now)} limit ${max}))`,
    tokens: sql`delete from ${apiTokens} where ctid = any(array(
      select ctid from ${apiTokens} where ${tokenSpent(now)} limit ${max}))`,
  };
}

/**
 * Forget what can no longer be used: grants whose window and ticket have both ended, and node
 * credentials minted from tickets that expired or were revoked. At most `max` rows of each.
 */
export async function pruneBootGrants(db: Db, now: Date, max = 1000): Promise<{ grants: number; tokens: number }> {
  const q = pruneStatements(now, max);
  const grants = await db.execute(q.grants);
  const tokens = await db.execute(q.tokens);
  return { grants: grants.rowCount ?? 0, tokens: tokens.rowCount ?? 0 };
}

/** How often a process prunes boot grants, at most (BootGrantPruner's default). */
export const PRUNE_EVERY_MS = 60_000;

/** Where a pruner tells of a failed prune: a role's logger. */
export type PruneLog = Pick<Logger, 'warn'>;

/**
 * Pruning kept off the boot endpoints' path. Readers ignore what has ended, so pruning only keeps the
 * tables small and need not follow every write: `soon` starts a prune (batches of pruneBootGrants
 * until one is not full) unless this pruner started one within `everyMs`, and does not wait for it.
 * A failed prune leaves its rows to the next, and is one warn line on the logger given to logTo: a
 * prune that keeps failing (a lock timeout, an outage) is a line a minute, not tables that grow unseen.
 * One per process (bootGrantPruner, given the role's logger at its start); tests make their own.
 */
export class BootGrantPruner {
  private last = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;
  private log: PruneLog | undefined;

  constructor(
    private readonly o: {
      /** At most one prune per this many ms (default PRUNE_EVERY_MS). */
      everyMs?: number;
      /** Monotonic ms (default performance.now). */
      clock?: () => number;
      /** Rows per statement (default 1000). */
      batch?: number;
    } = {},
  ) {}

  /** Tell failed prunes to `log` from now on (a later call replaces it). */
  logTo(log: PruneLog): void {
    this.log = log;
  }

  /**
   * Start a prune as of `now` unless one ran within `everyMs`. Only from the pool: a transaction's
   * handle is its caller's, and a statement after its end would fail.
   */
  soon(db: Db, now: Date): void {
    const t = this.o.clock ? this.o.clock() : performance.now();
    if (inTransaction(db) || this.running || t - this.last < (this.o.everyMs ?? PRUNE_EVERY_MS)) return;
    this.last = t;
    this.running = this.prune(db, now)
      .catch((e) =>
        this.log?.warn(
          { err: databaseErrorText(e) ?? (e instanceof Error ? e.message : String(e)) },
          'boot grant prune failed; ended grants and node credentials stay until a later prune',
        ),
      )
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Resolves once the prune in flight, if any, has ended. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async prune(db: Db, now: Date): Promise<void> {
    const batch = this.o.batch ?? 1000;
    for (;;) {
      const n = await pruneBootGrants(db, now, batch);
      if (n.grants < batch && n.tokens < batch) return;
    }
  }
}

/** This process's pruner (the boot endpoints' and power-on's). */
export const bootGrantPruner = new BootGrantPruner();

/** Every grant of a node (tests, explain). */
export async function grantsOf(db: Db, node: string): Promise<BootGrantRow[]> {
  return db.select().from(bootGrants).where(eq(bootGrants.node, node));
}
