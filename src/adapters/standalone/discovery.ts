/**
 * Hardware discovery and re-inspection (docs/discovery.md): ask BMCs what they manage
 * (redfish-inventory.ts, ipmi-inventory.ts), plan what that changes in the node inventory (domain/discovery.ts), and
 * unless it is a dry run, store it: new nodes registered, known ones given their new MAC, BMC address
 * and hardware, the discovery's BMC password sealed for each node as registration seals it. A BMC
 * that does not answer, answers garbage or refuses the login is a named failure of its own; the others
 * go on. Every call goes through one BmcGuard, so discovery paces each BMC as power does.
 */
import { z } from 'zod';
import type { Db } from '../../db/client.ts';
import { listNodes, storeInspections, type NodeInventoryRow } from '../../db/node-inventory.ts';
import { expandTargets, planDiscovery, type FoundSystem, type KnownNode, type PlannedNode } from '../../domain/discovery.ts';
import { check, fail, ok, text, type Checked } from '../../domain/validation.ts';
import { parseComponentId } from '../../domain/xname.ts';
import { BmcError, type BmcProblem } from './bmc.ts';
import { BmcGuard, type BmcGuardOptions } from './bmc-guard.ts';
import { IpmiInventory } from './ipmi-inventory.ts';
import { IpmiTool } from './ipmi.ts';
import { RedfishClient } from './redfish.ts';
import { RedfishInventory } from './redfish-inventory.ts';
import { open, seal } from './secrets.ts';

export const discoverRequest = z
  .object({
    targets: z.array(text(1, 255)).min(1, 'names no BMC').max(256, 'at most 256 targets (use CIDR blocks or ranges)'),
    /** Redfish (default) or IPMI (ipmitool: `fru print 0`, `mc info`). */
    driver: z.enum(['redfish', 'ipmi']).default('redfish'),
    /** Redfish over https (default) or http; the BMCs' port (default the scheme's; IPMI 623). */
    scheme: z.enum(['https', 'http']).default('https'),
    port: z.number().int().min(1).max(65_535).optional(),
    username: text(1, 255),
    password: text(1, 1024),
    /** A new node's xname, `{n}` = the BMC's position in the expanded targets (docs/discovery.md). */
    xnamePattern: text(1, 127)
      .refine((p) => p.includes('{n}') || !('error' in parseComponentId(p)), 'must hold {n} or be one xname')
      .optional(),
    /** What new nodes are registered with (known nodes keep theirs). */
    role: text(1, 63).default('Compute'),
    arch: z.enum(['X86', 'ARM', 'Other', 'Unknown']).default('X86'),
    groups: z
      .array(text(1, 127).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, ".", "_" and "-"'))
      .max(64)
      .default([]),
    dryRun: z.boolean().default(false),
  })
  .strict();

export interface BmcFailure {
  /** The BMC address asked (a target address, or a known node's BMC address). */
  address: string;
  /** The node it is, for re-inspection. */
  xname: string | null;
  problem: BmcProblem;
  message: string;
}

export interface DiscoveryResult {
  dryRun: boolean;
  /** BMC addresses asked. */
  asked: number;
  nodes: PlannedNode[];
  failures: BmcFailure[];
}

export interface NodeDiscoveryOptions {
  secretKey: Buffer | undefined;
  /** Deadline of one BMC call, ms (default 15000; BOOTORCH_BMC_TIMEOUT). */
  timeoutMs?: number;
  caFile?: string;
  /** Idle Redfish connections a sweep keeps at most (default: half the open-file limit; connections.ts). */
  keepConnections?: number;
  guard?: BmcGuardOptions;
  /** The ipmitool binary (default `ipmitool`). */
  ipmitool?: string;
}

const failure = (address: string, xname: string | null, e: unknown): BmcFailure => ({
  address,
  xname,
  problem: e instanceof BmcError ? e.kind : 'bmc_error',
  message: e instanceof Error ? e.message : String(e),
});

const known = (r: NodeInventoryRow): KnownNode => ({
  id: r.id,
  mac: r.mac,
  bmcDriver: r.bmcDriver,
  bmcAddress: r.bmcAddress,
  hardware: r.hardware ?? null,
});

export class NodeDiscovery {
  private readonly guard: BmcGuard;
  private readonly ipmi: IpmiInventory;

  constructor(private readonly o: NodeDiscoveryOptions) {
    this.guard = new BmcGuard(o.guard);
    // A process per ipmitool call: nothing stays open between sweeps.
    this.ipmi = new IpmiInventory(new IpmiTool({ binary: o.ipmitool, timeoutMs: o.timeoutMs, mode: 'process' }), this.guard);
  }

  /**
   * A sweep's Redfish reads, over a client of its own that the sweep closes when it ends: its calls to
   * one BMC share a connection, and none is left open after it (a sweep may reach thousands of BMCs,
   * and the client keeps an idle connection a minute).
   */
  private redfish(): { inventory: RedfishInventory; close(): Promise<void> } {
    const client = new RedfishClient({ timeoutMs: this.o.timeoutMs, caFile: this.o.caFile, keepConnections: this.o.keepConnections });
    return { inventory: new RedfishInventory(client, this.guard), close: () => client.close() };
  }

  /** Ask the BMCs the request names; store what they say unless it is a dry run. */
  async discover(db: Db, input: unknown): Promise<Checked<DiscoveryResult>> {
    const c = check(discoverRequest, input, 'input');
    if (!c.ok) return c;
    const req = c.value;
    const expanded = expandTargets(req.targets, undefined, 'input.targets');
    if (!expanded.ok) return fail(expanded.errors);
    if (!req.dryRun && !this.o.secretKey)
      return fail([{ field: 'input.password', message: 'cannot be stored: the server has no BOOTORCH_SECRET_KEY' }]);
    const found: FoundSystem[] = [];
    const failures: BmcFailure[] = [];
    const redfish = this.redfish();
    await Promise.all(
      expanded.addresses.map(async (address, position) => {
        // A target's own port wins over the request's.
        const withPort = `${address}${req.port && !address.includes(':') ? `:${req.port}` : ''}`;
        try {
          if (req.driver === 'ipmi') {
            const hardware = await this.ipmi.read({ id: address, address: withPort, username: req.username, password: req.password });
            found.push({ address, bmcAddress: withPort, driver: 'ipmi', systemId: '', position, hardware });
            return;
          }
          for (const s of await redfish.inventory.systems(`${req.scheme}://${withPort}`, req.username, req.password))
            found.push({ address, bmcAddress: s.url, driver: 'redfish', systemId: s.systemId, position, hardware: s.hardware });
        } catch (e) {
          failures.push(failure(address, null, e));
        }
      }),
    ).finally(() => redfish.close());
    found.sort((a, b) => a.position - b.position || a.bmcAddress.localeCompare(b.bmcAddress));
    const plan = planDiscovery(found, (await listNodes(db)).map(known), req.xnamePattern);
    if (!req.dryRun) await this.store(db, plan, { username: req.username, password: req.password }, req);
    return ok({ dryRun: req.dryRun, asked: expanded.addresses.length, nodes: plan, failures: this.sorted(failures, expanded.addresses) });
  }

  /**
   * Re-inspect known Redfish nodes with their stored credentials (all of them when `xnames` is
   * empty): what changed is planned as discovery plans it, and stored unless it is a dry run.
   */
  async inspect(db: Db, xnames: string[], dryRun: boolean): Promise<Checked<DiscoveryResult>> {
    if (!this.o.secretKey)
      return fail([{ field: 'xnames', message: 'cannot open the BMC passwords: the server has no BOOTORCH_SECRET_KEY' }]);
    const key = this.o.secretKey;
    const all = await listNodes(db);
    const rows = xnames.length ? all.filter((r) => xnames.includes(r.id)) : all;
    const missing = xnames.filter((x) => !rows.some((r) => r.id === x));
    if (missing.length) return fail(missing.map((x) => ({ field: `xnames[${xnames.indexOf(x)}]`, message: `no node ${x} is registered` })));
    const found: FoundSystem[] = [];
    const failures: BmcFailure[] = [];
    const redfish = this.redfish();
    await Promise.all(
      rows.map(async (r, position) => {
        try {
          if (r.bmcDriver === 'none') throw new Error(`${r.id} has no BMC bootorch can read`);
          if (!r.bmcSecret) throw new Error(`${r.id} has no stored BMC password`);
          const t = { id: r.id, address: r.bmcAddress, username: r.bmcUsername, password: open(key, r.id, r.bmcSecret) };
          if (r.bmcDriver === 'ipmi') {
            found.push({
              address: r.bmcAddress,
              bmcAddress: r.bmcAddress,
              driver: 'ipmi',
              systemId: '',
              position,
              hardware: await this.ipmi.read(t),
            });
            return;
          }
          const s = await redfish.inventory.system(t);
          found.push({ address: r.bmcAddress, bmcAddress: s.url, driver: 'redfish', systemId: s.systemId, position, hardware: s.hardware });
        } catch (e) {
          failures.push(failure(r.bmcAddress, r.id, e));
        }
      }),
    ).finally(() => redfish.close());
    found.sort((a, b) => a.position - b.position);
    const plan = planDiscovery(found, all.map(known));
    // Re-inspection keeps each node's own login: only what the BMC says is written.
    if (!dryRun) await this.store(db, plan, undefined);
    return ok({ dryRun, asked: rows.length, nodes: plan, failures: failures.sort((a, b) => a.address.localeCompare(b.address)) });
  }

  private sorted(failures: BmcFailure[], order: string[]): BmcFailure[] {
    const at = new Map(order.map((a, i) => [a, i]));
    return failures.sort((a, b) => at.get(a.address)! - at.get(b.address)!);
  }

  /** The plan's created and updated nodes (and the unchanged ones' inspection time), in one transaction. */
  private async store(
    db: Db,
    plan: PlannedNode[],
    login: { username: string; password: string } | undefined,
    defaults?: { role: string; arch: string; groups: string[] },
  ): Promise<void> {
    const rows = plan.flatMap((p) =>
      p.action === 'refused'
        ? []
        : [
            {
              id: p.xname,
              mac: p.system.hardware.macs[0]!,
              bmcDriver: p.system.driver,
              bmcAddress: p.bmcAddress,
              bmcUsername: login?.username,
              bmcSecret: login ? seal(this.o.secretKey!, p.xname, login.password) : undefined,
              hardware: p.system.hardware,
              role: defaults?.role ?? 'Compute',
              arch: defaults?.arch ?? 'X86',
              groups: defaults?.groups ?? [],
            },
          ],
    );
    await storeInspections(db, rows);
  }
}
