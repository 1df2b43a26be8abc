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
import type { BootStateReportedResolvers, MutationResolvers, QueryResolvers, ResolverFn } from '../api/generated/types.ts';

/** The named fields of a codegen resolvers object, without its catch-all index signature. */
type Named<T> = { [K in keyof T as string extends K ? never : K]-?: T[K] };
/** The root fields by name, each with its resolver's type as graphql-codegen makes it from schema/. */
type RootResolvers = Named<QueryResolvers<ApiContext>> & Named<MutationResolvers<ApiContext>>;
/** Object-type fields a handler may call with the parent a root field answered. */
type NestedResolvers = { 'BootStateReported.component': Named<BootStateReportedResolvers<ApiContext>>['component'] };
type Callable = RootResolvers & NestedResolvers;
/** A resolver's answer with every ResolverTypeWrapper (a value or its promise) resolved, as GraphQL resolves it. */
type Resolved<T> =
  T extends Promise<infer U>
    ? Resolved<U>
    : T extends Date
      ? T
      : T extends readonly (infer E)[]
        ? Resolved<E>[]
        : T extends object
          ? { [K in keyof T]: Resolved<T[K]> }
          : T;
type Fn<R> =
  NonNullable<R> extends ResolverFn<infer T, infer P, ApiContext, infer A> | { resolve: ResolverFn<infer T, infer P, ApiContext, infer A> }
    ? { result: Resolved<T>; parent: P; args: A }
    : never;

/** A field's arguments, its answer and its parent, as the schema types them. */
export type ArgsOf<F extends keyof Callable> = Fn<Callable[F]>['args'];
export type ResultOf<F extends keyof Callable> = Fn<Callable[F]>['result'];

/**
 * Runs a field by its schema name (e.g. `createSession`) with the arguments the schema gives it, and
 * answers its resolver's type: a renamed field or argument is a type error here, not a REST 500.
 */
export type Call = <F extends keyof Callable>(
  field: F,
  ...rest: F extends keyof NestedResolvers
    ? [args: ArgsOf<F>, parent: Fn<Callable[F]>['parent']]
    : Record<string, never> extends ArgsOf<F>
      ? [args?: ArgsOf<F>]
      : [args: ArgsOf<F>]
) => Promise<ResultOf<F>>;

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
  return (async (name: string, args: Record<string, unknown> = {}, parent?: unknown) => {
    const field = fields(name);
    if (!field?.resolve) throw new Error(`no field ${name} with a resolver in the schema`);
    // The resolvers read their arguments and context only; `info` carries the field name for the record.
    const info = { fieldName: field.name } as GraphQLResolveInfo;
    return await field.resolve(parent, args, ctx, info);
  }) as Call; // the schema's resolver, typed by Callable
}
