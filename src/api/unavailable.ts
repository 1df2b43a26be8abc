/**
 * "The database is down" as the API says it, in one place: `extensions.code` UNAVAILABLE (HTTP 503
 * with Retry-After; `extensions.retryAfter` in seconds for WebSocket clients, which see no header)
 * with a message that says so and why, instead of a masked INTERNAL_SERVER_ERROR or SQL text.
 * Clients and load balancers retry a 503; they should not retry a bug.
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import { isDatabaseUnavailable, unavailableReason } from '../db/outage.ts';

export { isDatabaseUnavailable };

/** The code of every "cannot serve this now, retry later" error (the database, an identity provider, a missing service). */
export const UNAVAILABLE = 'UNAVAILABLE';

/** Seconds a client should wait before retrying (a restart or failover takes seconds; a pool frees connections as fast). */
export const RETRY_AFTER_SECONDS = 5;

export const UNAVAILABLE_MESSAGE = `service unavailable: the database cannot be reached; retry in ${RETRY_AFTER_SECONDS} s`;

/** The message for a database error isDatabaseUnavailable accepts: unavailable, why, when to retry. */
export function unavailableMessage(e?: unknown): string {
  if (e === undefined) return UNAVAILABLE_MESSAGE;
  return `service unavailable: the database cannot be used (${unavailableReason(e)}); retry in ${RETRY_AFTER_SECONDS} s`;
}

/** The extensions of an UNAVAILABLE error (Apollo takes `http` for the status and headers, and strips it). */
export function unavailableExtensions(retryAfter = RETRY_AFTER_SECONDS) {
  return {
    code: UNAVAILABLE,
    retryAfter,
    http: { status: 503, headers: new Map([['retry-after', String(retryAfter)]]) },
  };
}

/** UNAVAILABLE with `message` (default: the database's), for a resolver to throw. */
export function unavailableError(message = UNAVAILABLE_MESSAGE, retryAfter = RETRY_AFTER_SECONDS): GraphQLError {
  return new GraphQLError(message, { extensions: unavailableExtensions(retryAfter) });
}

/** A formatted error of a lost database, as clients see it (no SQL, no stack): for the error formatters. */
export function unavailableFormatted(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  return {
    message: unavailableMessage(error),
    path: formatted.path,
    locations: formatted.locations,
    extensions: { code: UNAVAILABLE, retryAfter: RETRY_AFTER_SECONDS },
  };
}

/** Answer 503 (with Retry-After) when an error of the response is UNAVAILABLE and no field has data. */
export function unavailableStatusPlugin<C extends BaseContext>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const { errors, data } = response.body.singleResult;
          const down = errors?.find((e) => e.extensions?.code === UNAVAILABLE);
          const anyData = data && Object.values(data).some((v) => v !== null);
          if (!down || anyData) return;
          response.http.status = 503;
          response.http.headers.set('retry-after', String(down.extensions?.retryAfter ?? RETRY_AFTER_SECONDS));
        },
      };
    },
  };
}
