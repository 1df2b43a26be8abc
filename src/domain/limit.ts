/**
 * BOS limit expressions (reference §1.3): comma-separated tokens applied left to right to an
 * accumulator that starts empty. `&X` intersects, `!X` removes, `X` adds. X is `all`/`*` (the boot
 * set's nodes), an inventory name (group, partition, role or Role_SubRole), a hardware term
 * (`memoryGiB>=512`, domain/hardware-limit.ts) where the inventory knows hardware, else a literal xname.
 * The result is the boot set's nodes intersected with the accumulator.
 */
import { parseHardwareTerm, type HardwareTerm } from './hardware-limit.ts';
import { canonicalXname } from './xname.ts';

export interface LimitInventory {
  /** Members of a group / partition / role name, or undefined when the name is none of those. */
  members(name: string): ReadonlySet<string> | undefined;
  /** Nodes whose hardware matches a term; absent where the inventory holds no hardware. */
  hardware?(term: HardwareTerm): ReadonlySet<string>;
}

export class LimitSyntaxError extends Error {
  constructor(
    message: string,
    readonly token: number,
  ) {
    super(message);
  }
}

/** True when the limit selects everything (empty, null or `*`). */
export function isNoLimit(limit: string | null | undefined): boolean {
  return !limit || limit.trim() === '' || limit.trim() === '*';
}

/** Static check done at createSession: no empty tokens, no bare operators. */
export function checkLimitSyntax(limit: string): string | null {
  if (isNoLimit(limit)) return null;
  const tokens = limit.split(',');
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!.trim();
    if (t === '') return `token ${i + 1} is empty (two commas in a row, or a trailing comma)`;
    const body = t.replace(/^[&!]/, '');
    if (body === '' || /^[&!]/.test(body)) return `token ${i + 1} ("${t.slice(0, 40)}") has an operator but no name`;
    if (/\s/.test(body)) return `token ${i + 1} ("${t.slice(0, 40)}") contains white space`;
  }
  return null;
}

export function applyLimit(bootSetNodes: ReadonlySet<string>, limit: string | null | undefined, inv: LimitInventory): Set<string> {
  if (isNoLimit(limit)) return new Set(bootSetNodes);
  const problem = checkLimitSyntax(limit!);
  if (problem) throw new LimitSyntaxError(`invalid limit: ${problem}`, 0);
  let acc = new Set<string>();
  for (const raw of limit!.split(',')) {
    const t = raw.trim();
    const op = t[0] === '&' || t[0] === '!' ? t[0] : '';
    const body = op ? t.slice(1) : t;
    const x = resolve(body, bootSetNodes, inv);
    if (op === '&') acc = new Set([...acc].filter((n) => x.has(n)));
    else if (op === '!') for (const n of x) acc.delete(n);
    else for (const n of x) acc.add(n);
  }
  return new Set([...bootSetNodes].filter((n) => acc.has(n)));
}

function resolve(body: string, bootSetNodes: ReadonlySet<string>, inv: LimitInventory): ReadonlySet<string> {
  if (body === 'all' || body === '*') return bootSetNodes;
  const term = parseHardwareTerm(body);
  if (term) {
    if (!inv.hardware) throw new LimitSyntaxError(`invalid limit: "${body}" is a hardware term: only the nodes query resolves them`, 0);
    return inv.hardware(term);
  }
  return inv.members(body) ?? new Set([canonicalXname(body)]);
}

/**
 * The nodes a limit names one by one: xnames in tokens that add or intersect (not `!` ones), never
 * `all`/`*` or an inventory name (group, partition, role). A quarantined node joins a session only
 * when named so (domain/quarantine.ts).
 */
export function namedNodes(limit: string | null | undefined, inv: LimitInventory): Set<string> {
  const named = new Set<string>();
  if (isNoLimit(limit)) return named;
  for (const raw of limit!.split(',')) {
    const t = raw.trim();
    if (t.startsWith('!')) continue;
    const body = t.replace(/^&/, '');
    if (body === '' || body === 'all' || body === '*' || inv.members(body) || parseHardwareTerm(body)) continue;
    named.add(canonicalXname(body));
  }
  return named;
}
