/**
 * "The database is down" as the API says it: SERVICE_UNAVAILABLE (HTTP 503) with a message that says
 * so, instead of a masked INTERNAL_SERVER_ERROR. Clients and load balancers retry a 503; they should
 * not retry a bug.
 */
import { GraphQLError } from 'graphql';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';

export { isDatabaseUnavailable } from '../db/outage.ts';

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
