/**
 * xnames (reference csm-services §4.4). HSM normalises input: trim, lowercase, strip leading zeros
 * from each digit run; bootorch canonicalises node lists and component ids the same way.
 */
const NODE_RE = /^x([0-9]{1,4})c([0-7])s([0-9]+)b([0-9]+)n([0-9]+)$/;
const ANY_RE = [
  /^x([0-9]{1,4})$/,
  /^x([0-9]{1,4})c([0-7])$/,
  /^x([0-9]{1,4})c([0-7])b([0])$/,
  /^x([0-9]{1,4})c([0-7])s([0-9]+)$/,
  /^x([0-9]{1,4})c([0-7])s([0-9]+)b([0-9]+)$/,
  /^x([0-9]{1,4})c([0-7])s([0-9]+)e([0-9]+)$/,
  NODE_RE,
  /^x([0-9]{1,4})c([0-7])s([0-9]+)b([0-9]+)n([0-9]+)v([0-9]+)$/,
  /^x([0-9]{1,4})c([0-7])r([0-9]+)$/,
  /^x([0-9]{1,4})c([0-7])r([0-9]+)b([0-9]+)$/,
];

export function canonicalXname(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/\d+/g, (d) => d.replace(/^0+(?=\d)/, ''));
}

export function isNodeXname(x: string): boolean {
  return NODE_RE.test(x);
}

export function isXname(x: string): boolean {
  return ANY_RE.some((r) => r.test(x));
}

/** BOS's NID check: `nid000001` style names. */
export function looksLikeNid(x: string): boolean {
  return /^[&!]*nid/i.test(x.trim());
}

/** Component ids: canonical node (or virtual node) xnames. Returns the canonical form or an error text. */
export function parseComponentId(raw: string): { id: string } | { error: string } {
  if (typeof raw !== 'string' || raw.length === 0) return { error: 'must be a non-empty xname' };
  if (raw.length > 127) return { error: 'must be at most 127 characters' };
  const id = canonicalXname(raw);
  if (!isXname(id)) return { error: `"${raw.slice(0, 64)}" is not a valid xname (e.g. x3000c0s19b1n0)` };
  return { id };
}
