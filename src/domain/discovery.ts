/**
 * Discovery's pure half (docs/discovery.md): which BMC addresses a request names, and what the BMCs'
 * answers would change in the node inventory. The adapter (adapters/standalone/discovery.ts) asks the
 * BMCs and stores the plan; the dry run is this plan, shown instead of stored.
 *
 * Targets: `10.0.0.7`, a host name, either with `:port`, `10.0.0.0/24` (CIDR; without its network and broadcast address
 * below /31), `10.0.0.10-10.0.0.40` or `10.0.0.10-40` (a range of IPv4 addresses, both ends in). A
 * request expands to at most `max` addresses: more is a typed error naming the target, before any BMC
 * is asked.
 */
import type { NodeHardware } from './hardware.ts';
import { parseComponentId } from './xname.ts';

/** The most BMC addresses one discovery asks (a /18 and change: 10,000 nodes fit one request). */
export const MAX_DISCOVERY_ADDRESSES = 16_384;

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HOST = /^(\[[0-9a-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)$/i;

function ipv4(text: string): number | undefined {
  const m = IPV4.exec(text);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

export type Expanded = { ok: true; addresses: string[] } | { ok: false; errors: { field: string; message: string }[] };

/** First and last address (inclusive) of one target, or a message saying why it is not one. */
function span(target: string): { first: number; last: number } | { host: string } | { error: string } {
  const t = target.trim();
  const cidr = /^([\d.]+)\/(\d{1,2})$/.exec(t);
  if (cidr) {
    const base = ipv4(cidr[1]!);
    const bits = Number(cidr[2]);
    if (base === undefined || bits > 32) return { error: `"${t}" is not an IPv4 CIDR block (e.g. 10.0.0.0/24)` };
    const size = 2 ** (32 - bits);
    const first = base - (base % size);
    // A subnet's network and broadcast addresses are nobody's BMC; /31 and /32 have none.
    return bits >= 31 ? { first, last: first + size - 1 } : { first: first + 1, last: first + size - 2 };
  }
  const range = /^([\d.]+)-([\d.]+)$/.exec(t);
  if (range) {
    const first = ipv4(range[1]!);
    const lastText = range[2]!;
    const last =
      /^\d{1,3}$/.test(lastText) && first !== undefined ? ipv4(`${dotted(first).replace(/\.\d+$/, '')}.${lastText}`) : ipv4(lastText);
    if (first === undefined || last === undefined)
      return { error: `"${t}" is not an IPv4 range (e.g. 10.0.0.10-10.0.0.40 or 10.0.0.10-40)` };
    if (last < first) return { error: `"${t}" ends before it starts` };
    return { first, last };
  }
  if (ipv4(t) !== undefined) return { first: ipv4(t)!, last: ipv4(t)! };
  // One BMC at host:port (a BMC on another port than the request's).
  const withPort = /^(.+):(\d{1,5})$/.exec(t);
  if (withPort && !withPort[1]!.includes(':') && Number(withPort[2]) >= 1 && Number(withPort[2]) <= 65_535) {
    const h = span(withPort[1]!);
    if ('first' in h && h.first === h.last) return { host: `${dotted(h.first)}:${Number(withPort[2])}` };
    if ('host' in h) return { host: `${h.host}:${Number(withPort[2])}` };
  }
  if (HOST.test(t) && !/^[\d.]+$/.test(t)) return { host: t.toLowerCase() };
  return { error: `"${t.slice(0, 64)}" is not an address, a CIDR block or a range` };
}

/** The BMC addresses `targets` name, in order, each once; at most `max` of them. */
export function expandTargets(targets: string[], max = MAX_DISCOVERY_ADDRESSES, field = 'targets'): Expanded {
  if (targets.length === 0) return { ok: false, errors: [{ field, message: 'names no BMC' }] };
  const errors: { field: string; message: string }[] = [];
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (a: string) => {
    if (!seen.has(a)) {
      seen.add(a);
      out.push(a);
    }
  };
  targets.forEach((t, i) => {
    const s = span(t);
    if ('error' in s) return void errors.push({ field: `${field}[${i}]`, message: s.error });
    if ('host' in s) {
      add(s.host);
      return;
    }
    const count = s.last - s.first + 1;
    if (out.length + count > max) {
      errors.push({
        field: `${field}[${i}]`,
        message: `"${t}" holds ${count.toLocaleString('en')} addresses: one discovery asks at most ${max.toLocaleString('en')} BMCs`,
      });
      return;
    }
    for (let n = s.first; n <= s.last; n++) add(dotted(n));
  });
  return errors.length ? { ok: false, errors } : { ok: true, addresses: out };
}

/**
 * A new node's xname: the pattern with `{n}` replaced by the BMC's position in the expanded targets
 * plus `start`; without a pattern, the Redfish system's Id when that is an xname (a BMC that names its
 * system by xname, as HPE Cray EX controllers and the simulator do). Undefined when neither gives one.
 */
export function newNodeName(pattern: string | undefined, position: number, systemId: string): string | { error: string } | undefined {
  if (pattern) {
    const p = parseComponentId(pattern.replaceAll('{n}', String(position)));
    return 'error' in p ? { error: `xnamePattern gives ${p.error}` } : p.id;
  }
  const p = parseComponentId(systemId);
  return 'error' in p ? undefined : p.id;
}

/** One system a BMC answered for. */
export interface FoundSystem {
  /** The BMC address it was asked at (a target). */
  address: string;
  /** Where bootorch drives it: the Redfish ComputerSystem URL, or the IPMI host[:port]. */
  bmcAddress: string;
  driver: 'redfish' | 'ipmi';
  /** The Redfish system's Id ('' over IPMI). */
  systemId: string;
  /** Position of `address` in the expanded targets (the `{n}` of an xname pattern). */
  position: number;
  hardware: NodeHardware;
}

/** A node as the inventory holds it, the fields a plan compares. */
export interface KnownNode {
  id: string;
  mac: string;
  bmcDriver: string;
  bmcAddress: string;
  hardware: NodeHardware | null;
}

export interface Change {
  field: string;
  from: string;
  to: string;
}

export type PlannedNode =
  | {
      address: string;
      bmcAddress: string;
      xname: string;
      action: 'create' | 'update' | 'unchanged';
      changes: Change[];
      system: FoundSystem;
    }
  | { address: string; bmcAddress: string; xname: string | null; action: 'refused'; problem: string; system: FoundSystem };

const show = (v: unknown) =>
  v === null || v === undefined ? '' : Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** Field by field, what storing `s` over `known` changes (MAC, BMC address, each hardware field). */
function changes(known: KnownNode | undefined, s: FoundSystem, mac: string): Change[] {
  const out: Change[] = [];
  const add = (field: string, from: unknown, to: unknown) => {
    if (show(from) !== show(to)) out.push({ field, from: show(from), to: show(to) });
  };
  add('mac', known?.mac, mac);
  add('bmc.driver', known?.bmcDriver, s.driver);
  add('bmc.address', known?.bmcAddress, s.bmcAddress);
  for (const k of Object.keys(s.hardware) as (keyof NodeHardware)[]) add(`hardware.${k}`, known?.hardware?.[k], s.hardware[k]);
  return out;
}

/**
 * What storing the found systems does to the inventory. A system is matched to a known node by its
 * BMC address, else by its boot MAC; else it is new and named by `newNodeName`. Refused, each naming
 * why: a system without a MAC, one MAC reported by two BMCs (both refused), a boot MAC another node
 * holds, two systems on one xname, a new system with no name.
 */
export function planDiscovery(found: FoundSystem[], known: KnownNode[], pattern?: string): PlannedNode[] {
  const byBmc = new Map(known.map((k) => [k.bmcAddress, k]));
  const byMac = new Map(known.map((k) => [k.mac, k]));
  const macOwners = new Map<string, FoundSystem[]>();
  for (const s of found) for (const m of new Set(s.hardware.macs)) macOwners.set(m, [...(macOwners.get(m) ?? []), s]);
  const planned = found.map((s): PlannedNode => {
    const mac = s.hardware.macs[0];
    const base = { address: s.address, bmcAddress: s.bmcAddress, system: s };
    const match = byBmc.get(s.bmcAddress) ?? (mac ? byMac.get(mac) : undefined);
    const named = match?.id ?? newNodeName(pattern, s.position, s.systemId);
    const refuse = (problem: string): PlannedNode => ({
      ...base,
      xname: typeof named === 'string' ? named : null,
      action: 'refused',
      problem,
    });
    if (!mac) return refuse('the BMC reports no enabled network interface with a MAC: nothing to boot it by');
    const shared = s.hardware.macs.flatMap((m) => (macOwners.get(m)!.length > 1 ? [m] : []))[0];
    if (shared) {
      const others = macOwners
        .get(shared)!
        .filter((o) => o !== s)
        .map((o) => o.bmcAddress);
      return refuse(`MAC ${shared} is reported by another BMC too (${others.join(', ')}): which node owns it is not known`);
    }
    const holder = byMac.get(mac);
    if (holder && match && holder.id !== match.id) return refuse(`boot MAC ${mac} is registered to ${holder.id}`);
    if (named === undefined) return refuse(`no xname for a new node: system Id "${s.systemId}" is not one; give an xnamePattern`);
    if (typeof named !== 'string') return refuse(named.error);
    const xname = named;
    const c = changes(match, s, mac);
    return { ...base, xname, action: !match ? 'create' : c.length ? 'update' : 'unchanged', changes: c };
  });
  // Two systems on one xname: neither is stored.
  const counts = new Map<string, number>();
  for (const p of planned) if (p.action !== 'refused' && p.xname) counts.set(p.xname, (counts.get(p.xname) ?? 0) + 1);
  return planned.map((p) =>
    p.action !== 'refused' && (counts.get(p.xname) ?? 0) > 1
      ? { ...p, action: 'refused', problem: `${p.xname} would be the name of ${counts.get(p.xname)} systems` }
      : p,
  );
}
