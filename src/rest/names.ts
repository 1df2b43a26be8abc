/**
 * BOS spells fields in snake_case, bootorch's GraphQL in camelCase: the key conversion both ways, and
 * the translation of the field paths and words in bootorch's error messages into BOS's names, so a
 * REST client reads `boot_sets.compute.node_list[3]` where a GraphQL client reads
 * `bootSets.compute.nodeList[3]`.
 */
export const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
export const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** GraphQL argument names whose REST counterparts are not simply their snake_case. */
const ARGUMENTS: Record<string, string> = {
  input: '',
  patch: '',
  filter: 'filters',
  bssToken: 'actual_state.bss_token',
  first: 'page_size',
  after: 'start_after_id',
};

/** `input.bootSets.computeA.nodeList[3]` -> `boot_sets.computeA.node_list[3]` (boot set names kept as given). */
export function bosField(path: string): string {
  const parts = path.split('.');
  const out: string[] = [];
  parts.forEach((part, i) => {
    const m = /^([^[]*)(\[.*)?$/.exec(part)!;
    const [name, index = ''] = [m[1]!, m[2]];
    if (i === 0 && Object.hasOwn(ARGUMENTS, name)) {
      const renamed = ARGUMENTS[name]!;
      if (renamed) out.push(renamed + index);
      else if (index) out.push(index);
      return;
    }
    // Boot set names are the user's keys, and names that are not camelCase identifiers (a header) are no field of ours.
    const keyOfMap = i > 0 && /^bootSets$/.test(parts[i - 1]!.replace(/\[.*$/, ''));
    out.push((keyOfMap || !/^[a-z][a-zA-Z0-9]*$/.test(name) ? name : snake(name)) + index);
  });
  return out.join('.').replace(/\.\[/g, '[').replace(/^\./, '');
}

/** bootorch's own field names that appear inside messages, in BOS's spelling. */
const WORDS = [
  'bootSets',
  'nodeList',
  'nodeRolesGroups',
  'nodeGroups',
  'kernelParameters',
  'rootfsProvider',
  'rootfsProviderPassthrough',
  'enableCfs',
  'templateName',
  'includeDisabled',
  'actualState',
  'desiredState',
  'stagedState',
  'lastAction',
  'eventStats',
  'retryPolicy',
  'statusOverride',
  'bssToken',
  'bootArtifacts',
  'minAge',
  'maxAge',
  'skipBadIds',
  'stagedSession',
  'powerOnAttempts',
  'powerOffGracefulAttempts',
  'powerOffForcefulAttempts',
  'lastUpdated',
];
const WORD_RE = new RegExp(`\\b(${WORDS.join('|')})\\b`, 'g');

export const bosWords = (message: string) => message.replace(WORD_RE, (w) => snake(w));

/** Sets an own property, even one named `__proto__` (plain assignment would set the prototype). */
const put = (o: Record<string, unknown>, k: string, v: unknown) =>
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

/**
 * Deep key conversion of a JSON value (arrays and plain objects); `keep` names map-valued keys whose own
 * keys stay. With an explicit stack, not recursion: the value is the client's, and no client input may
 * overflow the stack (the doors refuse JSON nested past MAX_JSON_DEPTH before it gets here anyway).
 */
export function convertKeys(v: unknown, f: (k: string) => string, keep: ReadonlySet<string> = new Set()): unknown {
  const root: Record<string, unknown> = {};
  // [value to convert, where its copy goes, whether its own keys are converted]
  const stack: [unknown, (copy: unknown) => void, boolean][] = [[v, (c) => put(root, 'v', c), true]];
  while (stack.length) {
    const [x, place, rename] = stack.pop()!;
    if (Array.isArray(x)) {
      const out: unknown[] = new Array(x.length);
      place(out);
      x.forEach((item, i) => stack.push([item, (c) => (out[i] = c), true]));
    } else if (x && typeof x === 'object' && !(x instanceof Date)) {
      const out: Record<string, unknown> = {};
      place(out);
      // Two keys converting to one: the first one's place, the last one's value (as Object.fromEntries).
      const entries = new Map<string, unknown>();
      for (const [k, item] of Object.entries(x)) entries.set(rename ? f(k) : k, item);
      for (const [key, item] of entries) {
        put(out, key, undefined); // the keys keep their order; values are filled in as the stack unwinds
        const map = rename && keep.has(key) && item && typeof item === 'object' && !Array.isArray(item);
        stack.push([item, (c) => put(out, key, c), !map]);
      }
    } else {
      place(x);
    }
  }
  return root.v;
}
