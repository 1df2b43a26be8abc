/**
 * "The database is down" as the API says it: SERVICE_UNAVAILABLE (HTTP 503) with a message that says
 * so, instead of a masked INTERNAL_SERVER_ERROR. Clients and load balancers retry a 503; they should
 * not retry a bug.
 */
import { GraphQLError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';

/** Node socket errors and PostgreSQL SQLSTATEs that mean "no usable connection right now". */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PG_CODES = /^(08...|57P01|57P02|57P03|53300|3D000)$/; // connection exceptions, shutdown, starting up, too many connections
const MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|Cannot use a pool after calling end/i;

/** True when `e` (or anything in its cause chain, or an AggregateError's parts) is a lost or refused database connection. */
export function isDatabaseUnavailable(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 5) return false;
  const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; originalError?: unknown };
  if (typeof x.code === 'string' && (NET_CODES.has(x.code) || PG_CODES.test(x.code))) return true;
  if (typeof x.message === 'string' && MESSAGES.test(x.message)) return true;
  if (Array.isArray(x.errors) && x.errors.some((p) => isDatabaseUnavailable(p, depth + 1))) return true;
  return isDatabaseUnavailable(x.cause, depth + 1) || isDatabaseUnavailable(x.originalError, depth + 1);
}

export const UNAVAILABLE_MESSAGE = 'service unavailable: the database cannot be reached; retry shortly';

export function unavailableError(): GraphQLError {
  return new GraphQLError(UNAVAILABLE_MESSAGE, {
    extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503, headers: new Map([['retry-after', '5']]) } },
  });
}

/** Answer 503 (with Retry-After) when an error of the response is SERVICE_UNAVAILABLE and no field has data. */
export function unavailableStatusPlugin<C extends BaseContext>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const { errors, data } = response.body.singleResult;
          const down = errors?.some((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE');
          const anyData = data && Object.values(data).some((v) => v !== null);
          if (!down || anyData) return;
          response.http.status = 503;
          response.http.headers.set('retry-after', '5');
        },
      };
    },
  };
}
