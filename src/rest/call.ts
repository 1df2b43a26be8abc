/**
 * How a REST handler reaches bootorch: through the very root fields the GraphQL door serves. `Call`
 * runs a Query or Mutation field's resolver as the built schema holds it, so authorization (the one
 * check src/api/auth.ts puts in front of every root field: roles, tenants, node credentials, rate
 * limits), the input check, the audit line and the resolver's own rules are the same code for both
 * doors. A rule changed for GraphQL is changed for REST.
 */
import type { GraphQLField, GraphQLFieldMap, GraphQLResolveInfo, GraphQLSchema } from 'graphql';
import { gql } from '../api/edge-support.ts';
import type { ApiContext } from '../api/context.ts';

export type Call = <T = any>(field: string, args?: Record<string, unknown>, parent?: unknown) => Promise<T>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The fields a handler may call: the Query and Mutation fields by name, and an object type's field as
 * `Type.field` with the parent a root field answered (what GraphQL resolves only when asked for, such
 * as `BootStateReported.component`).
 */
export function rootFields(schema: GraphQLSchema): (name: string) => GraphQLField<unknown, ApiContext> | undefined {
  const root: GraphQLFieldMap<unknown, ApiContext> = { ...schema.getQueryType()!.getFields(), ...schema.getMutationType()!.getFields() };
  return (name) => {
    const dot = name.indexOf('.');
    if (dot < 0) return root[name];
    const type = schema.getType(name.slice(0, dot));
    return gql.isObjectType(type) ? (type.getFields()[name.slice(dot + 1)] as GraphQLField<unknown, ApiContext> | undefined) : undefined;
  };
}

/** A caller bound to one request's context. Field names are the GraphQL schema's (e.g. `createSession`). */
export function caller(fields: ReturnType<typeof rootFields>, ctx: ApiContext): Call {
  return async (name, args = {}, parent) => {
    const field = fields(name);
    if (!field?.resolve) throw new Error(`no field ${name} with a resolver in the schema`);
    // The resolvers read their arguments and context only; `info` carries the field name for the record.
    const info = { fieldName: field.name } as GraphQLResolveInfo;
    return (await field.resolve(parent, args, ctx, info)) as never;
  };
}
