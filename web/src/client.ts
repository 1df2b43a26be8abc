/**
 * The GraphQL client: urql over HTTP for queries and mutations, graphql-ws on the same origin for
 * subscriptions. The token goes in the Authorization header and in graphql-ws's connection_init
 * payload (`connectionParams.authorization`, as the CLI sends it).
 */
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient } from 'graphql-ws';

export interface ApiClient {
  client: Client;
  /** Calls `cb` each time graphql-ws connects again after losing its socket (events may have been missed). */
  onReconnect(cb: () => void): () => void;
  /** Calls `cb` each time the live socket closes (lost, refused, or closed by the server); graphql-ws keeps retrying. */
  onClosed(cb: () => void): () => void;
  close(): void;
}

/** How long the console waits for an answer from the API before it calls the request failed. */
const ANSWER_MS = 30_000;

/** The API did not answer in time, or could not be reached: worth asking again, unlike a refusal. */
export class NoAnswer extends Error {}

/**
 * fetch, bounded: a request the API (or a proxy in between) never answers fails after ANSWER_MS with
 * NoAnswer, as does one that cannot connect, instead of leaving the console waiting for ever.
 */
export async function apiFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const timeout = AbortSignal.timeout(ANSWER_MS);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    return await fetch(input, { ...init, signal });
  } catch (e) {
    if (timeout.aborted) throw new NoAnswer(`bootorch did not answer within ${ANSWER_MS / 1000} s`);
    if (e instanceof TypeError) throw new NoAnswer(`bootorch cannot be reached (${e.message})`);
    throw e;
  }
}

export function createApiClient(token: string): ApiClient {
  const origin = window.location.origin;
  const ws = createWsClient({
    url: `${origin.replace(/^http/, 'ws')}/graphql`,
    connectionParams: { authorization: `Bearer ${token}` },
    lazy: true,
    retryAttempts: Infinity,
    shouldRetry: () => true,
  });
  const client = new Client({
    url: `${origin}/graphql`,
    fetch: apiFetch,
    fetchOptions: { headers: { authorization: `Bearer ${token}` } },
    // Live data everywhere: a page always asks the API, the cache only dedupes requests in flight.
    requestPolicy: 'network-only',
    // POST always: Apollo's CSRF guard refuses simple GETs, and queries carry large variables.
    preferGetMethod: false,
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
        },
      }),
    ],
  });
  return {
    client,
    onReconnect: (cb) =>
      ws.on('connected', (_socket, _payload, wasRetry) => {
        if (wasRetry) cb();
      }),
    onClosed: (cb) => ws.on('closed', () => cb()),
    close: () => void ws.dispose(),
  };
}
