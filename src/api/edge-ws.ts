/**
 * The edge over graphql-ws (see edge.ts): a connection is authenticated once, at connection_init,
 * and counted against the rate limit; without a valid credential it is closed 4403 (graphql-ws's
 * Forbidden), over its address's budget 4429, and when its credential ends later 4401 with the reason
 * (credential-watch.ts). Every operation is then counted and its document checked like over HTTP.
 */
import type http from 'node:http';
import type { DocumentNode, GraphQLError as GraphQLErrorType, GraphQLSchema } from 'graphql';
import { isAuthFailure, type RateLimiter } from '../auth/index.ts';
import { withConnectionParams, type Identity } from './context.ts';
import type { CredentialWatch } from './credential-watch.ts';
import { principalOf, type Admitted, type Edge } from './edge.ts';
import { closeReason, gql, rateLimited, runtimeError } from './edge-support.ts';
import { countRefusal } from './metrics.ts';
import { tooDeep, valueTooDeep } from './input-bounds.ts';

export interface WsEdgeOptions {
  schema: GraphQLSchema;
  limiter?: RateLimiter;
  watch?: CredentialWatch;
  /** The per-operation context for an admitted identity. */
  contextFor(identity: Identity, request: http.IncomingMessage): Promise<unknown>;
}

/** graphql-ws's onConnect, onClose and onSubscribe. */
export function wsEdge(edge: Edge, o: WsEdgeOptions) {
  const contextFor = o.contextFor;
  type Extra = {
    request: http.IncomingMessage;
    socket: { close(code: number, reason: string): void };
    admitted?: Admitted;
    untrack?: () => void;
  };
  type Ctx = { extra: Extra; connectionParams?: Readonly<Record<string, unknown>> };
  return {
    onConnect: async (ctx: Ctx): Promise<boolean> => {
      const req = withConnectionParams(ctx.extra.request, ctx.connectionParams);
      const close = (code: number, reason: string) => {
        ctx.extra.socket.close(code, closeReason(reason));
        return false;
      };
      const a = await edge.admit(req);
      if (!a.ok) {
        const r = a.refusal;
        return 'code' in r && r.code === 'RATE_LIMITED'
          ? close(4429, `Too many requests: retry in ${r.retryAfterSeconds}s`)
          : close(4403, `Forbidden: ${(r as GraphQLErrorType).message}`);
      }
      const principal = principalOf(a.admitted.identity);
      if (!principal) {
        countRefusal('ws_unauthenticated');
        const p = a.admitted.identity.auth?.principal;
        if (p && isAuthFailure(p) && p.failure === 'idp-unavailable') return close(1013, `authentication unavailable: ${p.message}`);
        return close(
          4403,
          `Forbidden: not authenticated: ${p && isAuthFailure(p) ? p.message : 'no credential (connection_init payload { authorization: "Bearer <token>" })'}`,
        );
      }
      ctx.extra.admitted = a.admitted;
      ctx.extra.untrack = o.watch?.track(principal, (reason) => {
        countRefusal('ws_credential_ended');
        ctx.extra.socket.close(4401, closeReason(`Unauthorized: ${reason}`));
      });
      return true;
    },
    onClose: (ctx: Ctx) => {
      ctx.extra.untrack?.();
    },
    onSubscribe: async (
      ctx: Ctx,
      _id: string,
      payload: { query: string; operationName?: string | null; variables?: Record<string, unknown> | null },
    ) => {
      const admitted = ctx.extra.admitted;
      if (!admitted) return [runtimeError('not authenticated', { code: 'UNAUTHENTICATED' })];
      const principal = principalOf(admitted.identity)!;
      if (o.limiter) {
        const r = await o.limiter.take(principal);
        if (!r.ok) {
          countRefusal('rate_limited');
          return [rateLimited(r)];
        }
      }
      if (typeof payload.query !== 'string') return [runtimeError('an operation needs a query', { code: 'BAD_REQUEST' })];
      if (valueTooDeep(payload.variables)) {
        const e = tooDeep();
        return [runtimeError(e.message, { code: 'BAD_REQUEST', limit: e.limit, field: 'variables' })];
      }
      const c = edge.checkQuery(payload.query, true);
      if (!c.ok) return [c.error];
      const errors = gql.validate(o.schema, c.document);
      if (errors.length) return errors.map((e) => runtimeError(e.message, { ...e.extensions, code: 'GRAPHQL_VALIDATION_FAILED' }));
      return {
        schema: o.schema,
        document: c.document as DocumentNode,
        operationName: payload.operationName ?? undefined,
        variableValues: payload.variables ?? undefined,
        contextValue: await contextFor(admitted.identity, ctx.extra.request),
      };
    },
  };
}
