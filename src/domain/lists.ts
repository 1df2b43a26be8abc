/** List helpers shared by every layer (operators chunk their pages, adapters their requests). */

/** Split into chunks of `size` (0 or less = one chunk). An empty list gives no chunks. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (items.length === 0) return [];
  if (!size || size <= 0 || items.length <= size) return [items.slice()];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Items grouped by a key, in first-seen order (one outside call per group of like items). */
export function groupBy<T>(items: readonly T[], key: (t: T) => string): T[][] {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const g = m.get(k);
    if (g) g.push(i);
    else m.set(k, [i]);
  }
  return [...m.values()];
}
