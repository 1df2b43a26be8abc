/**
 * A BOS v2 client for tests, over real HTTP(S) against the real API server: every exchange is recorded
 * and `violations()` checks each against ../shared/contracts/bos-v2.openapi.yaml (request and response),
 * the way the CSM clients' exchanges are checked (test/contract/contracts.ts).
 */
import type { Exchange } from '../../src/sim/server.ts';
import { contract, type Violation } from '../contract/contracts.ts';
import { contractsMissing } from '../helpers/contracts-dir.ts';

export interface BosReply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface BosClient {
  /** `path` is under the base given (e.g. `/apis/bos` + `/v2/components`). */
  req<T = any>(
    method: string,
    path: string,
    o?: { body?: unknown; headers?: Record<string, string>; raw?: string; check?: boolean },
  ): Promise<BosReply<T>>;
  exchanges: Exchange[];
  violations(): Promise<Violation[]>;
}

/**
 * Load (and compile) the BOS contract before the first test: it takes seconds, and a keep-alive
 * connection left idle that long is closed by the server under the next request (ECONNRESET).
 */
export const loadBosContract = async () => {
  if (!contractsMissing()) await contract('bos');
};

export function bosClient(base: string, defaultHeaders: Record<string, string>, o: { fetch?: typeof fetch } = {}): BosClient {
  const exchanges: Exchange[] = [];
  const doFetch = o.fetch ?? fetch;
  return {
    exchanges,
    async req(method, path, r = {}) {
      const requestBody = r.raw ?? (r.body === undefined ? '' : JSON.stringify(r.body));
      const requestHeaders: Record<string, string> = {
        ...defaultHeaders,
        ...(requestBody ? { 'content-type': 'application/json' } : {}),
        ...r.headers,
      };
      const res = await doFetch(`${base}${path}`, { method, headers: requestHeaders, body: requestBody || undefined });
      const text = await res.text();
      const url = new URL(`${base}${path}`);
      const responseHeaders: Record<string, string> = {};
      res.headers.forEach((v, k) => {
        responseHeaders[k] = v;
      });
      if (r.check !== false) {
        exchanges.push({
          service: 'bos',
          method,
          path: url.pathname,
          query: url.search.slice(1),
          requestHeaders,
          requestBody,
          status: res.status,
          responseHeaders,
          responseBody: text,
        });
      }
      let body: unknown = text;
      if (/json/.test(res.headers.get('content-type') ?? '') && text) body = JSON.parse(text);
      return { status: res.status, body: body as never, headers: res.headers };
    },
    /** Where the contracts are absent the checks are not run (the run says so once, in the global setup). */
    async violations() {
      if (contractsMissing()) return [];
      const c = await contract('bos');
      return exchanges.flatMap((x) => c.check(x));
    },
  };
}
