/**
 * The rules for URLs that operators write (image manifests, the boot-parameters objects they link):
 * which origins an admin allowed, and which addresses are refused unless the admin named the origin.
 * Pure: src/adapters/outbound.ts enforces them on every request and every connection.
 */
import { BlockList, isIP } from 'node:net';

/** The setting that lists allowed origins; named in every refusal so the admin knows what to change. */
export const ORIGINS_SETTING = 'BOOTORCH_IMAGE_ORIGINS';

export interface OriginList {
  /** Origins the admin named (`https://host:port`): any address, internal ones included. */
  listed: ReadonlySet<string>;
  /** `*`: any http(s) origin, `https://*`: any https origin, at public addresses only; false: none. */
  anyPublic: 'http' | 'https' | false;
}

/**
 * BOOTORCH_IMAGE_ORIGINS's text as a list: comma-separated origins (`scheme://host[:port]`, nothing
 * after the host but an optional `/`), `*` or `https://*`. Throws with the entry that is not one.
 */
export function parseOriginList(text: string | undefined): OriginList {
  const listed = new Set<string>();
  let anyPublic: OriginList['anyPublic'] = false;
  for (const entry of (text ?? '').split(',').map((s) => s.trim())) {
    if (!entry) continue;
    if (entry === '*') anyPublic = 'http';
    else if (entry === 'https://*') anyPublic = anyPublic || 'https';
    else listed.add(originOf(entry));
  }
  return { listed, anyPublic };
}

/** An admin-written origin, normalised (default port dropped, host lower-cased, IPs canonical). */
export function originOf(entry: string): string {
  let u: URL;
  try {
    u = new URL(entry);
  } catch {
    throw new Error(`"${entry}" is not an origin (scheme://host[:port])`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`"${entry}": only http and https origins`);
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== ''))
    throw new Error(`"${entry}" is not an origin: nothing may follow host[:port]`);
  return u.origin;
}

/** Host names that are internal whatever they resolve to (cloud metadata, this machine). */
const INTERNAL_NAMES: Array<[RegExp, string]> = [
  [/^metadata\.google\.internal\.?$/i, 'cloud metadata'],
  [/^(.+\.)?localhost\.?$/i, 'loopback'],
];

/** First match wins: the specific classes before the ranges that hold them. */
const RANGES: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['169.254.169.254', 32, 'ipv4', 'cloud metadata'],
  ['fd00:ec2::254', 128, 'ipv6', 'cloud metadata'],
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (CGNAT)'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const LISTS = RANGES.map(([net, prefix, family, why]) => {
  const b = new BlockList();
  b.addSubnet(net, prefix, family);
  return { b, why };
});

/**
 * Why an address must not be reached at an origin the admin did not name, or undefined when it is
 * public. IPv6 forms that carry an IPv4 address (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64
 * 64:ff9b::/96, 6to4 2002::/16) are judged by that address.
 */
export function addressRefusal(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const v4 = family === 6 ? embeddedIPv4(address) : address;
  const [ip, type] = v4 ? [v4, 'ipv4' as const] : [address, 'ipv6' as const];
  for (const { b, why } of LISTS) if (b.check(ip, type)) return `${why} address`;
  return undefined;
}

/** Why a host name is internal whatever DNS says (an IP literal is judged as an address). */
export function hostRefusal(hostname: string): string | undefined {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return addressRefusal(host);
  for (const [re, why] of INTERNAL_NAMES) if (re.test(host)) return `${why} host name`;
  return undefined;
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(address: string): string | undefined {
  const w = ipv6Words(address);
  if (!w) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d and ::a.b.c.d (but :: and ::1 are themselves, see RANGES).
  if (zero(0, 5) && (w[5] === 0xffff || (w[5] === 0 && (w[6]! > 0 || w[7]! > 1)))) return v4(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return v4(w[6]!, w[7]!);
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (with :: expanded and a trailing dotted quad read). */
function ipv6Words(address: string): number[] | undefined {
  let a = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::') as [string, string | undefined];
  const words = (s: string | undefined) => (s ? s.split(':').map((x) => Number.parseInt(x, 16)) : []);
  const h = words(head);
  const t = words(tail);
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  return all.length === 8 && all.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff) ? all : undefined;
}
