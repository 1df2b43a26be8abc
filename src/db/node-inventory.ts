/**
 * The node inventory bootorch keeps when it runs a site without CSM (BOOTORCH_ADAPTERS=standalone):
 * one row per node with its MAC, arch, groups, role, BMC (driver, address, user, the password
 * encrypted by adapters/standalone/secrets.ts) and the boot parameters power-on set for it last,
 * with their referral token (what BSS keeps). The only module with SQL on this table.
 */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { pgTable, text, boolean, timestamp, jsonb, uniqueIndex, check } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';
import { components } from './schema.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const BMC_DRIVERS = ['ipmi', 'redfish', 'none'] as const;
export type BmcDriver = (typeof BMC_DRIVERS)[number];

export const nodeInventory = pgTable('node_inventory', {
  /** Canonical node xname: the component id. */
  id: text('id').primaryKey(),
  /** Host name, free text ('' = none). */
  hostname: text('hostname').notNull().default(''),
  /** Lowercase, colon-separated; the boot-script endpoint finds the node by it. */
  mac: text('mac').notNull(),
  arch: text('arch').notNull().default('X86'),
  role: text('role').notNull().default('Compute'),
  subRole: text('sub_role').notNull().default(''),
  groups: jsonb('groups').notNull().$type<string[]>().default([]),
  enabled: boolean('enabled').notNull().default(true),
  locked: boolean('locked').notNull().default(false),
  bmcDriver: text('bmc_driver').notNull().default('none'),
  /** ipmi: host[:port]; redfish: the ComputerSystem URL (https://bmc/redfish/v1/Systems/1). */
  bmcAddress: text('bmc_address').notNull().default(''),
  bmcUsername: text('bmc_username').notNull().default(''),
  /** AES-256-GCM sealed password (v1:iv:tag:ciphertext, base64url); never leaves the server. */
  bmcSecret: text('bmc_secret').notNull().default(''),
  bootKernel: text('boot_kernel').notNull().default(''),
  bootInitrd: text('boot_initrd').notNull().default(''),
  bootParams: text('boot_params').notNull().default(''),
  bootToken: text('boot_token').notNull().default(''),
  bootSetAt: ts('boot_set_at'),
  createdAt: ts('created_at').notNull().defaultNow(),
  updatedAt: ts('updated_at').notNull().defaultNow(),
}, (t) => [
  uniqueIndex('node_inventory_mac_idx').on(t.mac),
  check('node_inventory_bmc_driver_ck', sql`${t.bmcDriver} in ('ipmi','redfish','none')`),
  check('node_inventory_arch_ck', sql`${t.arch} in ('X86','ARM','Other','Unknown')`),
]);

export type NodeInventoryRow = typeof nodeInventory.$inferSelect;
export type NodeInventoryInsert = typeof nodeInventory.$inferInsert;

/** Fields a registration writes (everything but the boot parameters and timestamps). */
export type NodeRegistration = Omit<NodeInventoryInsert, 'bootKernel' | 'bootInitrd' | 'bootParams' | 'bootToken' | 'bootSetAt' | 'createdAt' | 'updatedAt'>;

/**
 * Insert or replace nodes by id; a repeated call with the same input changes nothing but updated_at.
 * A node registered without a new secret keeps its stored one (`bmcSecret` undefined).
 */
export async function upsertNodes(db: Db, nodes: NodeRegistration[]): Promise<NodeInventoryRow[]> {
  if (nodes.length === 0) return [];
  return db.insert(nodeInventory).values(nodes).onConflictDoUpdate({
    target: nodeInventory.id,
    set: {
      hostname: sql`excluded.hostname`, mac: sql`excluded.mac`, arch: sql`excluded.arch`, role: sql`excluded.role`,
      subRole: sql`excluded.sub_role`, groups: sql`excluded.groups`, enabled: sql`excluded.enabled`, locked: sql`excluded.locked`,
      bmcDriver: sql`excluded.bmc_driver`, bmcAddress: sql`excluded.bmc_address`, bmcUsername: sql`excluded.bmc_username`,
      bmcSecret: sql`case when excluded.bmc_secret = '' then ${nodeInventory.bmcSecret} else excluded.bmc_secret end`,
      updatedAt: sql`now()`,
    },
  }).returning();
}

export async function listNodes(db: Db, ids?: string[]): Promise<NodeInventoryRow[]> {
  if (ids && ids.length === 0) return [];
  return db.select().from(nodeInventory).where(ids ? inArray(nodeInventory.id, ids) : undefined).orderBy(asc(nodeInventory.id));
}

export async function nodeByMac(db: Db, mac: string): Promise<NodeInventoryRow | undefined> {
  const [row] = await db.select().from(nodeInventory).where(eq(nodeInventory.mac, mac));
  return row;
}

export async function deleteNode(db: Db, id: string): Promise<boolean> {
  const rows = await db.delete(nodeInventory).where(eq(nodeInventory.id, id)).returning({ id: nodeInventory.id });
  return rows.length > 0;
}

/** BSS's PUT bootparameters for known hosts: the same kernel, initrd, params and token for each. Returns the ids written. */
export async function setBootParameters(
  db: Db, ids: string[], p: { kernel: string; initrd: string; params: string; token: string },
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.update(nodeInventory)
    .set({ bootKernel: p.kernel, bootInitrd: p.initrd, bootParams: p.params, bootToken: p.token, bootSetAt: sql`now()` })
    .where(inArray(nodeInventory.id, ids)).returning({ id: nodeInventory.id });
  return rows.map((r) => r.id);
}

/** Nodes with boot parameters among `ids`. */
export async function bootParametersOf(db: Db, ids: string[]): Promise<NodeInventoryRow[]> {
  if (ids.length === 0) return [];
  return db.select().from(nodeInventory)
    .where(and(inArray(nodeInventory.id, ids), sql`(${nodeInventory.bootKernel} <> '' or ${nodeInventory.bootInitrd} <> '' or ${nodeInventory.bootParams} <> '')`))
    .orderBy(asc(nodeInventory.id));
}

/**
 * Nodes among `ids` that reported the boot bootorch set last (their component's actual referral
 * token is the node's current one): the standalone stand-in for cfs-state-reporter's "I am up".
 */
export async function reportedCurrentBoot(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.select({ id: nodeInventory.id }).from(nodeInventory)
    .innerJoin(components, eq(components.id, nodeInventory.id))
    .where(and(inArray(nodeInventory.id, ids), sql`${nodeInventory.bootToken} <> ''`, eq(components.actualBssToken, nodeInventory.bootToken)));
  return rows.map((r) => r.id);
}

export async function nodesByMacs(db: Db, macs: string[]): Promise<NodeInventoryRow[]> {
  if (macs.length === 0) return [];
  return db.select().from(nodeInventory).where(inArray(nodeInventory.mac, macs));
}

/** The session a node's component belongs to now ('' when none), for events about the node. */
export async function componentSessionOf(db: Db, id: string): Promise<{ session: string; sessionTenant: string }> {
  const [row] = await db.select({ session: components.session, sessionTenant: components.sessionTenant }).from(components).where(eq(components.id, id));
  return row ?? { session: '', sessionTenant: '' };
}
