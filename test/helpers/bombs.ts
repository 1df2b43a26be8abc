/** Hostile GraphQL documents of issue 12, shared by the unit and integration tests. */

/** `levels` fragments, each spreading the next `width` times: width^levels copies of the leaf. */
export function fanOut(levels: number, width: number, leaf = 'version { version }'): string {
  const frags: string[] = [];
  for (let i = 0; i < levels; i++) frags.push(`fragment F${i} on Query{${Array.from({ length: width }, () => `...F${i + 1}`).join(' ')}}`);
  frags.push(`fragment F${levels} on Query{${leaf}}`);
  return `query{...F0} ${frags.join(' ')}`;
}

/** `n` fragments, each spreading the next: a chain graphql's own rules recurse down. */
export function chain(n: number): string {
  const frags: string[] = [];
  for (let i = 0; i < n; i++) frags.push(`fragment F${i} on Query { version { version } ...F${i + 1} }`);
  frags.push(`fragment F${n} on Query { version { version } }`);
  return `query{...F0} ${frags.join(' ')}`;
}
