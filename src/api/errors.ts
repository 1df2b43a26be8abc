/**
 * The errors resolvers throw. Every one carries extensions.code; bad input also names the field
 * (extensions.field, the first problem) and lists every problem (extensions.issues).
 */
import { GraphQLError } from 'graphql';
import type { Checked, Issue } from '../domain/validation.ts';

export function badInput(issues: Issue[], lead?: string): GraphQLError {
  const first = issues[0] ?? { field: '', message: 'invalid input' };
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  const message = `${lead ? `${lead}: ` : ''}${first.field ? `${first.field}: ` : ''}${first.message}${more}`;
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', field: first.field || null, issues } });
}

export function notFound(what: string, name: string): GraphQLError {
  return new GraphQLError(`no ${what} "${name.slice(0, 127)}"`, { extensions: { code: 'NOT_FOUND' } });
}

export function conflict(message: string, field?: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'CONFLICT', ...(field ? { field } : {}) } });
}

/** The value of a check, or BAD_USER_INPUT with all its problems. */
export function valueOrThrow<T>(c: Checked<T>, lead?: string): T {
  if (!c.ok) throw badInput(c.errors, lead);
  return c.value;
}
