/**
 * How a REST handler reaches bootorch: through the very root fields the GraphQL door serves. `Call`
 * runs a Query or Mutation field's resolver as the built schema holds it, so authorization (the one
 * check src/api/auth.ts puts in front of every root field: roles, tenants, node credentials, rate
 * limits), the input check, the audit line and the resolver's own rules are the same code for both
 * doors. A rule changed for GraphQL is changed for REST.
 */
import type { GraphQLFieldMap, GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import type { ApiContext } from '../api/context.ts';

export type Call = <T = any>(field: string, args?: Record<string, unknown>) => Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function rootFields(schema: GraphQLSchema): GraphQLFieldMap<unknown, ApiContext> {
  return { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
}

/** A caller bound to one request's context. Field names are the GraphQL schema's (e.g. `createSession`). */
export function caller(fields: GraphQLFieldMap<unknown, ApiContext>, ctx: ApiContext): Call {
  return async (name, args = {}) => {
    const field = fields[name];
    if (!field?.resolve) throw new Error(`no root field ${name} in the schema`);
    // The resolvers read their arguments and context only; `info` carries the field name for the record.
    const info = { fieldName: name } as GraphQLResolveInfo;
    return (await field.resolve(undefined, args, ctx, info)) as never;
  };
}
