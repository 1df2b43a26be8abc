/** DateTime: ISO 8601 with time zone on the wire, a Date (or such a string) inside. Codes: the map's columns. */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

function parse(v: unknown): Date {
  const d = typeof v === 'string' ? new Date(v) : undefined;
  if (!d || Number.isNaN(d.getTime()) || !/[zZ]|[+-]\d\d:?\d\d$/.test(v as string)) {
    throw new GraphQLError('DateTime must be an ISO 8601 string with a time zone', { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return d;
}

export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize(v) {
    if (v instanceof Date) return v.toISOString();
    if (typeof v === 'string') return new Date(v).toISOString();
    throw new GraphQLError('DateTime cannot represent this value');
  },
  parseValue: parse,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parse(ast.value);
  },
});

/** Codes: a column of small non-negative integers (the machine map's), serialized as the array it is. Output only. */
export const Codes = new GraphQLScalarType({
  name: 'Codes',
  serialize(v) {
    if (Array.isArray(v)) return v;
    throw new GraphQLError('Codes cannot represent this value');
  },
  parseValue() {
    throw new GraphQLError('Codes is an output type', { extensions: { code: 'BAD_USER_INPUT' } });
  },
  parseLiteral() {
    throw new GraphQLError('Codes is an output type', { extensions: { code: 'BAD_USER_INPUT' } });
  },
});
