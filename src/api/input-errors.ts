/**
 * Input checks every field gets, before its own validation: strings PostgreSQL cannot store (NUL) or
 * that are not Unicode text (lone surrogates) are refused naming the field, instead of failing deep in
 * SQL as an internal error. And GraphQL's own variable errors ("Variable "$input" got invalid value
 * ... at "input.bootSets[0].name"") get the same `extensions.field` as the resolvers' errors.
 */
import type { GraphQLFormattedError } from 'graphql';
import { badInput } from './errors.ts';

// biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL character is what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The path of the first string in `value` that cannot be stored as text, or null. An explicit stack,
 * not recursion: the value is the client's, and no client input may overflow the stack.
 */
export function unstorableAt(value: unknown, path = ''): string | null {
  const stack: [unknown, string][] = [[value, path]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return at;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}[${i}]`]);
    } else if (v && typeof v === 'object') {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], at ? `${at}.${entries[i]![0]}` : entries[i]![0]]);
    }
  }
  return null;
}

/** Throws BAD_USER_INPUT naming the first argument path holding an unstorable string. */
export function assertStorable(args: Record<string, unknown>): void {
  const at = unstorableAt(args);
  if (at !== null) throw badInput([{ field: at, message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }]);
}

const AT_PATH = /^Variable "\$([A-Za-z_]\w*)" got invalid value .*? at "([^"]+)"/s;
const VARIABLE = /^Variable "\$([A-Za-z_]\w*)"/;

/** A variable coercion error gets `extensions.field`: the input path (`input.bootSets[0].name`), else the variable. */
export function withVariableField(e: GraphQLFormattedError): GraphQLFormattedError {
  // graphql stops after 50 variable errors with a code-less error; the 50 before it name the fields.
  if (/^Too many errors processing variables/.test(e.message)) return { ...e, extensions: { code: 'BAD_USER_INPUT', field: null } };
  if (e.extensions?.code !== 'BAD_USER_INPUT' || e.extensions.field !== undefined) return e;
  const m = AT_PATH.exec(e.message) ?? VARIABLE.exec(e.message);
  if (!m) return e;
  return { ...e, extensions: { ...e.extensions, field: m[2] ?? m[1] } };
}
