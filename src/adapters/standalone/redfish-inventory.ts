/**
 * A BMC's hardware inventory over Redfish (DMTF DSP0266 / DSP8010 schemas), what Ironic's redfish
 * inspect reads and a little more: the Systems collection, then per ComputerSystem its
 * ProcessorSummary, MemorySummary, BiosVersion, identity (Manufacturer, Model, SerialNumber, UUID),
 * EthernetInterfaces (MACAddress of each enabled one, in the BMC's order: the first is the one it
 * network-boots from), Storage's Drives (CapacityBytes) and its Manager's FirmwareVersion. Every GET
 * goes through the BmcGuard (one call at a time per BMC, the global limit, circuits, Retry-After) and
 * RedfishClient (TLS, timeouts, no redirects, classified errors); a link off the BMC's origin is refused.
 * A link a BMC does not give is no information (empty), a link it gives that fails is the BMC's error.
 */
import { z } from 'zod';
import { emptyHardware, type NodeHardware } from '../../domain/hardware.ts';
import { normaliseMac } from '../../domain/node-registration.ts';
import { bmcError, type BmcTarget } from './bmc.ts';
import type { BmcGuard } from './bmc-guard.ts';
import type { RedfishClient } from './redfish.ts';

/** The most members of one collection followed (a hostile BMC cannot make discovery walk forever). */
const MAX_MEMBERS = 64;

const link = z.object({ '@odata.id': z.string().min(1) }).passthrough();
const collection = z.object({ Members: z.array(link).default([]) }).passthrough();
const str = z
  .string()
  .nullish()
  .transform((v) => v ?? '');
const num = z
  .number()
  .nonnegative()
  .nullish()
  .transform((v) => v ?? null);

const computerSystem = z
  .object({
    Id: z.string(),
    UUID: str,
    Manufacturer: str,
    Model: str,
    SerialNumber: str,
    BiosVersion: str,
    ProcessorSummary: z.object({ Count: num, Model: str }).passthrough().nullish(),
    MemorySummary: z.object({ TotalSystemMemoryGiB: num }).passthrough().nullish(),
    EthernetInterfaces: link.nullish(),
    Storage: link.nullish(),
    Links: z
      .object({ ManagedBy: z.array(link).nullish() })
      .passthrough()
      .nullish(),
  })
  .passthrough();

const status = z.object({ State: z.string().nullish() }).passthrough().nullish();
const nic = z.object({ MACAddress: str, PermanentMACAddress: str, Status: status }).passthrough();
const storage = z.object({ Drives: z.array(link).nullish() }).passthrough();
const drive = z.object({ Id: str, Name: str, Model: str, CapacityBytes: num }).passthrough();
const manager = z.object({ FirmwareVersion: str }).passthrough();

export interface RedfishSystem {
  /** The ComputerSystem URL (the node's BMC address for power). */
  url: string;
  systemId: string;
  hardware: NodeHardware;
}

export class RedfishInventory {
  constructor(
    private readonly client: RedfishClient,
    private readonly guard: BmcGuard,
  ) {}

  /** Every system the BMC at `root` (`https://host[:port]`) manages, with its hardware. */
  async systems(root: string, username: string, password: string): Promise<RedfishSystem[]> {
    const t: BmcTarget = { id: root, address: `${root}/redfish/v1/Systems`, username, password };
    const members = (await this.get(t, 'GET Systems', t.address, collection)).Members.slice(0, MAX_MEMBERS);
    const out: RedfishSystem[] = [];
    for (const m of members) out.push(await this.system({ ...t, address: new URL(m['@odata.id'], t.address).toString() }));
    return out;
  }

  /** One ComputerSystem (its URL in `t.address`) with its hardware: re-inspection of a known node. */
  async system(t: BmcTarget): Promise<RedfishSystem> {
    const s = await this.get(t, 'GET ComputerSystem', t.address, computerSystem);
    const hw = emptyHardware('redfish');
    Object.assign(hw, {
      manufacturer: s.Manufacturer,
      model: s.Model,
      serialNumber: s.SerialNumber,
      uuid: s.UUID,
      biosVersion: s.BiosVersion,
      cpuCount: s.ProcessorSummary?.Count ?? null,
      cpuModel: s.ProcessorSummary?.Model ?? '',
      memoryGiB: s.MemorySummary?.TotalSystemMemoryGiB ?? null,
    });
    if (s.EthernetInterfaces) {
      for (const n of await this.members(t, 'EthernetInterfaces', s.EthernetInterfaces['@odata.id'], nic)) {
        const state = n.Status?.State;
        const mac = normaliseMac(n.MACAddress || n.PermanentMACAddress);
        if (mac && (!state || state === 'Enabled') && !hw.macs.includes(mac)) hw.macs.push(mac);
      }
    }
    if (s.Storage) {
      for (const st of await this.members(t, 'Storage', s.Storage['@odata.id'], storage)) {
        for (const d of (st.Drives ?? []).slice(0, MAX_MEMBERS)) {
          const v = await this.get(t, 'GET Drive', d['@odata.id'], drive);
          hw.disks.push({ name: v.Name || v.Id, model: v.Model, capacityBytes: v.CapacityBytes ?? 0 });
        }
      }
    }
    const managedBy = s.Links?.ManagedBy?.[0];
    if (managedBy) hw.bmcFirmwareVersion = (await this.get(t, 'GET Manager', managedBy['@odata.id'], manager)).FirmwareVersion;
    return { url: t.address, systemId: s.Id, hardware: hw };
  }

  private async members<S extends z.ZodTypeAny>(t: BmcTarget, what: string, at: string, schema: S): Promise<z.output<S>[]> {
    const c = await this.get(t, `GET ${what}`, at, collection);
    const out: z.output<S>[] = [];
    for (const m of c.Members.slice(0, MAX_MEMBERS)) out.push(await this.get(t, `GET ${what} member`, m['@odata.id'], schema));
    return out;
  }

  private async get<S extends z.ZodTypeAny>(t: BmcTarget, call: string, at: string, schema: S): Promise<z.output<S>> {
    const body = await this.guard.run(t, () => this.client.getJson(t, call, at));
    const r = schema.safeParse(body);
    if (!r.success) {
      const i = r.error.issues[0];
      throw bmcError('redfish', call, t, 'unexpected_answer', `${i?.path.join('.') || '(body)'}: ${i?.message}`);
    }
    return r.data;
  }
}

const flag = z
  .boolean()
  .nullish()
  .transform((v) => v ?? false);
const port = z.number().int().min(1).max(65535).nullish();
const serialConsole = z
  .object({
    SerialConsole: z
      .object({
        SSH: z.object({ ServiceEnabled: flag, Port: port, ConsoleEntryCommand: z.string().nullish() }).passthrough().nullish(),
        IPMI: z.object({ ServiceEnabled: flag, Port: port }).passthrough().nullish(),
      })
      .passthrough()
      .nullish(),
  })
  .passthrough();

/**
 * Where a system's host serial console is, from its ComputerSystem's `SerialConsole` (ComputerSystem
 * v1.13+): SSH first (host, port default 22, the command that enters the console), else IPMI SOL (host,
 * port default 623), else none. Unknown or absent properties mean "not offered".
 */
export type SerialConsoleWay =
  | { way: 'ssh'; host: string; port: number; entryCommand: string }
  | { way: 'sol'; address: string }
  | { way: 'none' };

/** Reads the ComputerSystem at `t.address` once, through the guard (its turn per BMC, limits, circuit). */
export async function readSerialConsole(client: RedfishClient, guard: BmcGuard, t: BmcTarget): Promise<SerialConsoleWay> {
  const call = 'GET SerialConsole';
  const r = serialConsole.safeParse(await guard.run(t, () => client.getJson(t, call, t.address)));
  if (!r.success) {
    const i = r.error.issues[0];
    throw bmcError('redfish', call, t, 'unexpected_answer', `${i?.path.join('.') || '(body)'}: ${i?.message}`);
  }
  return serialConsoleWay(r.data, t.address);
}

/** The way a ComputerSystem's (checked) answer offers, its hosts taken from the system's URL. */
function serialConsoleWay(system: z.output<typeof serialConsole>, address: string): SerialConsoleWay {
  const host = new URL(address).hostname.replace(/^\[|\]$/g, '');
  const sc = system.SerialConsole;
  if (sc?.SSH?.ServiceEnabled) return { way: 'ssh', host, port: sc.SSH.Port ?? 22, entryCommand: sc.SSH.ConsoleEntryCommand ?? '' };
  if (sc?.IPMI?.ServiceEnabled) {
    const p = sc.IPMI.Port ?? 623;
    const h = host.includes(':') ? `[${host}]` : host;
    return { way: 'sol', address: p === 623 ? h : `${h}:${p}` };
  }
  return { way: 'none' };
}

/** serialConsoleWay of an unchecked body (what a BMC answered); throws on a malformed SerialConsole. */
export const serialConsoleOf = (body: unknown, address: string): SerialConsoleWay => serialConsoleWay(serialConsole.parse(body), address);
