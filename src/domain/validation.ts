/**
 * Input problems as data. Domain checks return a `Checked<T>` (the cleaned value plus warnings, or the
 * list of problems) instead of throwing, so the API can name every bad field in one answer and the
 * template validator can report errors and warnings side by side.
 */
import { z } from 'zod';

export interface Issue {
  /** Input path such as `bootSets.compute.nodeList[3]`; '' when it concerns the whole input. */
  field: string;
  message: string;
}

export type Checked<T> = { ok: true; value: T; warnings: Issue[] } | { ok: false; errors: Issue[]; warnings: Issue[] };

export const ok = <T>(value: T, warnings: Issue[] = []): Checked<T> => ({ ok: true, value, warnings });
export const fail = <T = never>(errors: Issue[], warnings: Issue[] = []): Checked<T> => ({ ok: false, errors, warnings });

/** `a.b[3].c` from a path of keys and indexes. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

export function joinField(prefix: string, field: string): string {
  if (!prefix) return field;
  if (!field) return prefix;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}

/** zod issues as Issues under `prefix`; `rename` may rewrite a path (e.g. a boot set index to its name). */
export function zodIssues(error: z.ZodError, prefix = '', rename?: (path: PropertyKey[]) => PropertyKey[]): Issue[] {
  return error.issues.map((i) => {
    const path = rename ? rename([...i.path]) : [...i.path];
    return { field: joinField(prefix, fieldPath(path)), message: i.message };
  });
}

/** Parse with zod into a Checked value. */
export function check<S extends z.ZodTypeAny>(schema: S, input: unknown, prefix = ''): Checked<z.output<S>> {
  const r = schema.safeParse(input);
  return r.success ? ok(r.data) : fail(zodIssues(r.error, prefix));
}

/** BOS resource names (templates, sessions, boot sets): 1-127 characters. */
export const NAME_RE = /^[a-zA-Z0-9](?:[-._a-zA-Z0-9]{0,125}[a-zA-Z0-9])?$/;
export const nameSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(127, 'must be at most 127 characters')
  .regex(NAME_RE, 'must start and end with a letter or digit and contain only letters, digits, "-", "." and "_"');

/** A bounded string: `text(1, 4095)`; missing or null reads "is required". */
export function text(min: number, max: number): z.ZodString {
  let s = z.string({ error: (i) => (i.input == null ? 'is required' : 'must be a string') }).max(max, `must be at most ${max} characters`);
  if (min > 0) s = s.min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
  return s;
}
