/**
 * Hardware terms in limit expressions (`memoryGiB>=512`, `bios<1.4.2`, `bmcFirmware=2.10.1`): a key,
 * an operator and a value, matched against what a node's BMC said (domain/hardware.ts). Numbers compare
 * as numbers, versions part by part (`1.10` > `1.9`), other text as equal or not. A node never
 * inspected matches no term. The nodes query resolves them (docs/discovery.md#finding-nodes-by-hardware).
 */
import type { NodeHardware } from './hardware.ts';

const KEYS = {
  memoryGiB: (h: NodeHardware) => h.memoryGiB,
  cpus: (h: NodeHardware) => h.cpuCount,
  cpuModel: (h: NodeHardware) => h.cpuModel,
  model: (h: NodeHardware) => h.model,
  manufacturer: (h: NodeHardware) => h.manufacturer,
  bios: (h: NodeHardware) => h.biosVersion,
  bmcFirmware: (h: NodeHardware) => h.bmcFirmwareVersion,
  mac: (h: NodeHardware) => h.macs,
} as const;

type Key = keyof typeof KEYS;
type Op = '=' | '!=' | '<' | '<=' | '>' | '>=';

export interface HardwareTerm {
  key: Key;
  op: Op;
  value: string;
}

const TERM = new RegExp(`^(${Object.keys(KEYS).join('|')})(!=|<=|>=|=|<|>)(.+)$`);

/** The term a limit token's body is, or undefined when it is a name (group, role, xname). */
export function parseHardwareTerm(body: string): HardwareTerm | undefined {
  const m = TERM.exec(body);
  return m ? { key: m[1] as Key, op: m[2] as Op, value: m[3]! } : undefined;
}

/** -1, 0 or 1: numbers as numbers, else dotted versions part by part (numeric parts as numbers). */
function compare(a: string, b: string): number {
  const pa = a.split(/[.-]/);
  const pb = b.split(/[.-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '';
    const y = pb[i] ?? '';
    const c = /^\d+$/.test(x) && /^\d+$/.test(y) ? Number(x) - Number(y) : x.localeCompare(y);
    if (c !== 0) return Math.sign(c);
  }
  return 0;
}

export function matchesHardware(h: NodeHardware | null | undefined, t: HardwareTerm): boolean {
  if (!h) return false;
  const v = KEYS[t.key](h);
  if (v === null || v === '') return false;
  if (Array.isArray(v)) {
    const has = v.includes(t.value.toLowerCase());
    return t.op === '=' ? has : t.op === '!=' ? !has : false;
  }
  const c = typeof v === 'number' ? Math.sign(v - Number(t.value)) : compare(v, t.value);
  if (typeof v === 'number' && Number.isNaN(Number(t.value))) return false;
  switch (t.op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}
