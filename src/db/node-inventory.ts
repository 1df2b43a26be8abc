/**
 * The node inventory bootorch keeps when it runs a site without CSM (BOOTORCH_ADAPTERS=standalone):
 * one row per node with its MAC, arch, groups, role, BMC (driver, address, user, the password
 * encrypted by adapters/standalone/secrets.ts) and the boot parameters power-on set for it last,
 * with their referral token (what BSS keeps). The only module with SQL on this table.
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import { pgTable, text, boolean, integer, timestamp, jsonb, uniqueIndex, check } from 'drizzle-orm/pg-core';
import type { Db } from './client.ts';
import type { NodeHardware } from '../domain/hardware.ts';
import { components } from './schema.ts';
import { anyOf, fromExcluded, insertInChunks } from './sql.ts';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const BMC_DRIVERS = ['ipmi', 'redfish', 'none'] as const;
export type BmcDriver = (typeof BMC_DRIVERS)[number];

export const nodeInventory = pgTable(
  'node_inventory',
  {
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
    /** The SHA-256 fingerprint of the BMC's SSH host key the console capture first saw ('' = none pinned); cleared with a new BMC address. */
    bmcHostKey: text('bmc_host_key').notNull().default(''),
    bootKernel: text('boot_kernel').notNull().default(''),
    bootInitrd: text('boot_initrd').notNull().default(''),
    bootParams: text('boot_params').notNull().default(''),
    bootToken: text('boot_token').notNull().default(''),
    bootSetAt: ts('boot_set_at'),
    /** Configuration (standalone CFS): the desired hook name ('' = none), enabled, failures, run state. */
    configDesired: text('config_desired').notNull().default(''),
    configEnabled: boolean('config_enabled').notNull().default(true),
    configErrorCount: integer('config_error_count').notNull().default(0),
    /** '' = not run for the current desired configuration (or failed and to be retried), running, applied. */
    configState: text('config_state').notNull().default(''),
    configStartedAt: ts('config_started_at'),
    configTags: jsonb('config_tags').notNull().$type<Record<string, string>>().default({}),
    /** What the node's BMC last said about its hardware (discovery, re-inspection); null = never inspected. */
    hardware: jsonb('hardware').$type<NodeHardware>(),
    inspectedAt: ts('inspected_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('node_inventory_mac_idx').on(t.mac),
    check('node_inventory_bmc_driver_ck', sql`${t.bmcDriver} in ('ipmi','redfish','none')`),
    check('node_inventory_arch_ck', sql`${t.arch} in ('X86','ARM','Other','Unknown')`),
    check('node_inventory_config_state_ck', sql`${t.configState} in ('','running','applied')`),
  ],
);

export type NodeInventoryRow = typeof nodeInventory.$inferSelect;
export type NodeInventoryInsert = typeof nodeInventory.$inferInsert;

/** Fields a registration writes (everything but the boot parameters and timestamps). */
export type NodeRegistration = Pick<
  NodeInventoryInsert,
  | 'id'
  | 'hostname'
  | 'mac'
  | 'arch'
  | 'role'
  | 'subRole'
  | 'groups'
  | 'enabled'
  | 'locked'
  | 'bmcDriver'
  | 'bmcAddress'
  | 'bmcUsername'
  | 'bmcSecret'
>;

/** A node written again keeps its host key pin only while its BMC address stays the same. */
const keptHostKey = sql`case when excluded.bmc_address = ${nodeInventory.bmcAddress} then ${nodeInventory.bmcHostKey} else '' end`;

/**
 * Insert or replace nodes by id; a repeated call with the same input changes nothing but updated_at.
 * A node registered without a new secret keeps its stored one (`bmcSecret` undefined).
 */
export async function upsertNodes(db: Db, nodes: NodeRegistration[]): Promise<NodeInventoryRow[]> {
  const written = await insertInChunks(db, nodes, (tx, part) =>
    tx
      .insert(nodeInventory)
      .values(part)
      .onConflictDoUpdate({
        target: nodeInventory.id,
        set: {
          ...fromExcluded(nodeInventory, [
            'hostname',
            'mac',
            'arch',
            'role',
            'subRole',
            'groups',
            'enabled',
            'locked',
            'bmcDriver',
            'bmcAddress',
            'bmcUsername',
          ]),
          bmcSecret: sql`case when excluded.bmc_secret = '' then ${nodeInventory.bmcSecret} else excluded.bmc_secret end`,
          bmcHostKey: keptHostKey,
          updatedAt: sql`now()`,
        },
      })
      .returning(),
  );
  return written.flat();
}

/** What a discovery or re-inspection writes for one node (new ones get role, arch and groups too). */
export interface NodeInspection {
  id: string;
  mac: string;
  bmcDriver: BmcDriver;
  bmcAddress: string;
  /** Undefined (re-inspection): the stored login is kept. */
  bmcUsername?: string;
  bmcSecret?: string;
  hardware: NodeHardware;
  role: string;
  arch: string;
  groups: string[];
}

/**
 * Insert discovered nodes, or give known ones (by id) their MAC, BMC and hardware, stamped
 * inspected now; a known node keeps its role, arch, groups and flags, and its login when none is given.
 */
export async function storeInspections(db: Db, nodes: NodeInspection[]): Promise<void> {
  await insertInChunks(db, nodes, (tx, part) =>
    tx
      .insert(nodeInventory)
      .values(part.map((n) => ({ ...n, bmcUsername: n.bmcUsername ?? '', bmcSecret: n.bmcSecret ?? '', inspectedAt: sql`now()` })))
      .onConflictDoUpdate({
        target: nodeInventory.id,
        set: {
          ...fromExcluded(nodeInventory, ['mac', 'bmcDriver', 'bmcAddress', 'hardware', 'inspectedAt']),
          bmcUsername: sql`case when excluded.bmc_secret = '' then ${nodeInventory.bmcUsername} else excluded.bmc_username end`,
          bmcSecret: sql`case when excluded.bmc_secret = '' then ${nodeInventory.bmcSecret} else excluded.bmc_secret end`,
          bmcHostKey: keptHostKey,
          updatedAt: sql`now()`,
        },
      }),
  );
}

export async function listNodes(db: Db, ids?: string[]): Promise<NodeInventoryRow[]> {
  if (ids && ids.length === 0) return [];
  return db
    .select()
    .from(nodeInventory)
    .where(ids ? anyOf(nodeInventory.id, ids) : undefined)
    .orderBy(asc(nodeInventory.id));
}

/*
 * The worker's reads of many nodes at a time take only the columns their use needs: a status pass, the
 * discovery tick and the limit's inventory read every node, and the whole row (hardware JSON, five
 * timestamps) for 100,000 nodes was most of a standalone worker's CPU in drizzle's row mapping and GC.
 */
const n = nodeInventory;
const SUMMARY = { id: n.id, role: n.role, subRole: n.subRole, arch: n.arch, enabled: n.enabled, locked: n.locked, groups: n.groups };
const BMC = {
  id: n.id,
  bmcDriver: n.bmcDriver,
  bmcAddress: n.bmcAddress,
  bmcUsername: n.bmcUsername,
  bmcSecret: n.bmcSecret,
  bmcHostKey: n.bmcHostKey,
};
const CONFIG = {
  id: n.id,
  configDesired: n.configDesired,
  configEnabled: n.configEnabled,
  configErrorCount: n.configErrorCount,
  configState: n.configState,
  configStartedAt: n.configStartedAt,
  configTags: n.configTags,
};

/** What the inventory port tells of a node: roles, architecture, groups, enabled and locked. */
export type NodeSummary = Pick<NodeInventoryRow, keyof typeof SUMMARY>;
/** A node's BMC: driver, address, user, sealed password and pinned SSH host key. */
export type NodeBmc = Pick<NodeInventoryRow, keyof typeof BMC>;
/** A node's configuration state (standalone CFS). */
export type NodeConfig = Pick<NodeInventoryRow, keyof typeof CONFIG>;

/** The nodes' summaries (all nodes, or these ids), by id. */
export async function listNodeSummaries(db: Db, ids?: string[]): Promise<NodeSummary[]> {
  if (ids && ids.length === 0) return [];
  return db
    .select(SUMMARY)
    .from(n)
    .where(ids ? anyOf(n.id, ids) : undefined)
    .orderBy(asc(n.id));
}

/** These nodes' BMCs (driver none included: no BMC registered), by id. */
export async function nodeBmcs(db: Db, ids: string[]): Promise<NodeBmc[]> {
  if (ids.length === 0) return [];
  return db.select(BMC).from(n).where(anyOf(n.id, ids)).orderBy(asc(n.id));
}

/** The nodes' configuration state (all nodes, or these ids), by id. */
export async function nodeConfigs(db: Db, ids?: string[]): Promise<NodeConfig[]> {
  if (ids && ids.length === 0) return [];
  return db
    .select(CONFIG)
    .from(n)
    .where(ids ? anyOf(n.id, ids) : undefined)
    .orderBy(asc(n.id));
}

const WITH_BMC = sql`${nodeInventory.bmcDriver} in ('ipmi', 'redfish') and ${nodeInventory.bmcAddress} <> '' and ${nodeInventory.bmcSecret} <> ''`;

/**
 * One value that changes when any node's BMC (driver, address, user, secret) does, or a node with one
 * comes or goes: what console capture reads every second instead of the whole inventory (at 100,000
 * nodes the whole inventory a second was most of a worker's CPU). Computed in the database, one row
 * back. The host key pin is left out (the capture writes it itself).
 */
export async function bmcsFingerprint(db: Db): Promise<string> {
  const [row] = await db
    .select({
      f: sql<string>`count(*)::text || ':' || coalesce(sum(hashtext(${n.id} || chr(1) || ${n.bmcDriver} || chr(1) || ${n.bmcAddress} || chr(1) || ${n.bmcUsername} || chr(1) || ${n.bmcSecret})::bigint), 0)::text`,
    })
    .from(n)
    .where(WITH_BMC);
  return row?.f ?? '';
}

/** The nodes with a BMC console capture can reach (driver, address and a stored password), by id. */
export async function listBmcs(db: Db): Promise<NodeBmc[]> {
  return db.select(BMC).from(n).where(WITH_BMC).orderBy(asc(n.id));
}

/**
 * Pin a node's BMC SSH host key fingerprint when none is pinned yet for this BMC address. Returns the
 * pin now stored ('' when the node is gone or its address changed meanwhile): the caller compares it.
 */
export async function pinBmcHostKey(db: Db, id: string, bmcAddress: string, fingerprint: string): Promise<string> {
  const rows = await db
    .update(nodeInventory)
    .set({ bmcHostKey: sql`case when ${nodeInventory.bmcHostKey} = '' then ${fingerprint} else ${nodeInventory.bmcHostKey} end` })
    .where(and(eq(nodeInventory.id, id), eq(nodeInventory.bmcAddress, bmcAddress)))
    .returning({ pin: nodeInventory.bmcHostKey });
  return rows[0]?.pin ?? '';
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
  db: Db,
  ids: string[],
  p: { kernel: string; initrd: string; params: string; token: string },
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(nodeInventory)
    .set({ bootKernel: p.kernel, bootInitrd: p.initrd, bootParams: p.params, bootToken: p.token, bootSetAt: sql`now()` })
    .where(anyOf(nodeInventory.id, ids))
    .returning({ id: nodeInventory.id });
  return rows.map((r) => r.id);
}

/** Nodes with boot parameters among `ids`. */
export async function bootParametersOf(db: Db, ids: string[]): Promise<NodeInventoryRow[]> {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(nodeInventory)
    .where(
      and(
        anyOf(nodeInventory.id, ids),
        sql`(${nodeInventory.bootKernel} <> '' or ${nodeInventory.bootInitrd} <> '' or ${nodeInventory.bootParams} <> '')`,
      ),
    )
    .orderBy(asc(nodeInventory.id));
}

export async function nodesByMacs(db: Db, macs: string[]): Promise<NodeInventoryRow[]> {
  if (macs.length === 0) return [];
  return db.select().from(nodeInventory).where(anyOf(nodeInventory.mac, macs));
}

/** The session a node's component belongs to now ('' when none), for events about the node. */
export async function componentSessionOf(db: Db, id: string): Promise<{ session: string; sessionTenant: string }> {
  const [row] = await db
    .select({ session: components.session, sessionTenant: components.sessionTenant })
    .from(components)
    .where(eq(components.id, id));
  return row ?? { session: '', sessionTenant: '' };
}

export interface ConfigPatchRow {
  desired?: string;
  enabled?: boolean;
  tags?: Record<string, string>;
  /** Start the configuration over (error count 0, not run): power-on's `state: []`. */
  restart?: boolean;
}

/**
 * CFS's PATCH for nodes among `ids`: tags merged; a changed desired configuration, or `restart`,
 * resets the error count and the run state (CFS's auto fields). Returns the ids patched.
 */
export async function patchConfig(db: Db, ids: string[], p: ConfigPatchRow): Promise<string[]> {
  if (ids.length === 0) return [];
  const desired = p.desired === undefined ? nodeInventory.configDesired : sql`${p.desired}`;
  const reset = sql`(${p.restart ?? false} or ${nodeInventory.configDesired} <> ${desired})`;
  const rows = await db
    .update(nodeInventory)
    .set({
      configDesired: sql`${desired}`,
      configEnabled: p.enabled === undefined ? sql`${nodeInventory.configEnabled}` : p.enabled,
      configTags: sql`${nodeInventory.configTags} || ${JSON.stringify(p.tags ?? {})}::jsonb`,
      configErrorCount: sql`case when ${reset} then 0 else ${nodeInventory.configErrorCount} end`,
      configState: sql`case when ${reset} then '' else ${nodeInventory.configState} end`,
    })
    .where(anyOf(nodeInventory.id, ids))
    .returning({ id: nodeInventory.id });
  return rows.map((r) => r.id);
}

/**
 * Enable the configuration of nodes among `ids` that wait for their boot and have reported the boot
 * bootorch set last (their component's actual referral token is the node's current one): the
 * standalone stand-in for cfs-state-reporter's "I am up". Returns the ids enabled.
 */
export async function enableBootedConfig(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .update(nodeInventory)
    .set({ configEnabled: true })
    .from(components)
    .where(
      and(
        eq(components.id, nodeInventory.id),
        anyOf(nodeInventory.id, ids),
        eq(nodeInventory.configEnabled, false),
        sql`${nodeInventory.configDesired} <> '' and ${nodeInventory.bootToken} <> ''`,
        eq(components.actualBssToken, nodeInventory.bootToken),
      ),
    )
    .returning({ id: nodeInventory.id });
  return rows.map((r) => r.id);
}

/**
 * Claim the configuration runs that are due: enabled, a desired configuration, not run yet, fewer
 * failures than `retryPolicy`, or running for longer than `staleSeconds` (its worker died). One
 * UPDATE, so two workers never claim the same node. Returns (id, configuration) pairs.
 */
export async function claimConfigRuns(db: Db, retryPolicy: number, staleSeconds: number): Promise<{ id: string; desired: string }[]> {
  return db
    .update(nodeInventory)
    .set({ configState: 'running', configStartedAt: sql`now()` })
    .where(
      and(
        eq(nodeInventory.configEnabled, true),
        sql`${nodeInventory.configDesired} <> ''`,
        sql`${nodeInventory.configErrorCount} < ${retryPolicy}`,
        sql`(${nodeInventory.configState} = '' or (${nodeInventory.configState} = 'running'
        and ${nodeInventory.configStartedAt} < now() - make_interval(secs => ${staleSeconds})))`,
      ),
    )
    .returning({ id: nodeInventory.id, desired: nodeInventory.configDesired });
}

/** Record a run's outcome for the nodes still running that configuration. */
export async function finishConfigRun(db: Db, ids: string[], desired: string, ok: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db
    .update(nodeInventory)
    .set({
      configState: ok ? 'applied' : '',
      configErrorCount: ok ? sql`${nodeInventory.configErrorCount}` : sql`${nodeInventory.configErrorCount} + 1`,
    })
    .where(and(anyOf(nodeInventory.id, ids), eq(nodeInventory.configDesired, desired), eq(nodeInventory.configState, 'running')));
}
