/**
 * The REST edge's shape checks: what GraphQL's type system guarantees the resolvers (an object where an
 * object belongs, a boolean where a boolean belongs, no unknown fields: BOS's schemas say
 * `additionalProperties: false`), checked on BOS's JSON before it is translated. Ranges, patterns and
 * every other rule stay where the GraphQL door has them (src/domain).
 */
import { Problem } from './problem.ts';

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The body as an object, or 400 naming `at`. */
export function object(v: unknown, at = ''): Json {
  if (!isObject(v)) throw new Problem(400, `${at ? `${at}: ` : ''}must be a JSON object`);
  return v;
}

/** 400 naming the first key of `o` outside `allowed`. */
export function onlyKeys(o: Json, allowed: readonly string[], at = ''): void {
  const extra = Object.keys(o).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw new Problem(400, `${at ? `${at}.` : ''}${extra}: is not a field of this object`);
}

/** Booleans, where given, must be booleans (GraphQL would refuse anything else before the resolver). */
export function booleans(o: Json, keys: readonly string[], at = ''): void {
  for (const k of keys) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'boolean')
      throw new Problem(400, `${at ? `${at}.` : ''}${k}: must be a boolean`);
  }
}

/** Strings, where given, must be strings (null stays "not given"). */
export function strings(o: Json, keys: readonly string[], at = ''): void {
  for (const k of keys) {
    if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'string')
      throw new Problem(400, `${at ? `${at}.` : ''}${k}: must be a string`);
  }
}

/** One of a closed set of values (a GraphQL enum), or 400. */
export function oneOf<T extends string>(v: unknown, values: readonly T[], at: string): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
    throw new Problem(400, `${at}: must be one of ${values.map((x) => x || '""').join(', ')}`);
  }
  return v as T;
}

/** BOS's timestamps: naive ISO strings without a zone (`2023-06-27T00:33:17`), in UTC. */
export function bosTime(d: Date | string | null | undefined): string | undefined {
  if (d === null || d === undefined) return undefined;
  const date = typeof d === 'string' ? new Date(d) : d;
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().slice(0, 19);
}

/** A copy without the undefined and null values (BOS leaves unset fields out). */
export function defined(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));
}
