/**
 * The CLI's way to the API: GraphQL over HTTP (fetch) for queries and mutations, graphql-ws for
 * subscriptions, with the endpoint and token from flags or the environment. Every failure becomes a
 * CliError with a sentence a person can act on and an exit code.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';

/** Exit codes: 1 the operation failed (or a session ended with failures), 3 the API could not be used (docs/cli.md). */
export const EXIT_FAILED = 1;
export const EXIT_UNREACHABLE = 3;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_FAILED,
    /**
     * Trying again later may succeed: the API could not be reached, a proxy answered 502/503/504, the
     * API answered UNAVAILABLE (its database is down or failing over), or the live connection closed.
     * `retryAfterSeconds`: what the API asked for, when it did.
     */
    readonly transient?: { retryAfterSeconds?: number },
  ) {
    super(message);
  }
}

/** HTTP statuses of a restart or an overload behind a proxy: retried, never called bad input. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

export interface Endpoint {
  /** http(s)://host:port/graphql */
  url: string;
  token?: string;
  /** Cray-Tenant-Name */
  tenant?: string;
  /** Where the token came from, for error messages. */
  tokenSource?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:4000/graphql';

export function endpointFrom(o: { url?: string; token?: string; tenant?: string }, env: NodeJS.ProcessEnv = process.env): Endpoint {
  // An empty flag or variable counts as not given.
  const raw = o.url || env.BOOTORCH_URL || DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a URL: ${raw} (give --url or BOOTORCH_URL like ${DEFAULT_URL})`, 2);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`the API URL must be http(s): ${raw}`, 2);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/graphql';
  const tenant = o.tenant || env.BOOTORCH_TENANT || undefined;
  if (o.token) return { url: url.toString(), token: o.token, tenant, tokenSource: '--token' };
  if (env.BOOTORCH_TOKEN) return { url: url.toString(), token: env.BOOTORCH_TOKEN, tenant, tokenSource: 'BOOTORCH_TOKEN' };
  const dev = LOCAL_HOSTS.has(url.hostname) ? devToken(env) : undefined;
  return { url: url.toString(), token: dev?.token, tenant, tokenSource: dev?.file };
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The admin token `bootorch dev` keeps in its data folder (BOOTORCH_DATA_DIR, default .data), for a
 * CLI on the same machine talking to a local API: a newcomer needs no token step. Only a file the
 * user can read already, only for localhost.
 */
function devToken(env: NodeJS.ProcessEnv): { token: string; file: string } | undefined {
  const file = path.join(env.BOOTORCH_DATA_DIR || '.data', 'dev-admin-token');
  try {
    const token = fs.readFileSync(file, 'utf8').trim();
    return token ? { token, file } : undefined;
  } catch {
    return undefined;
  }
}

interface GraphQLErrorShape {
  message: string;
  extensions?: { code?: string; field?: string | null; issues?: { field: string; message: string }[]; retryAfter?: number };
}

export class ApiClient {
  private ws?: Client;

  constructor(readonly endpoint: Endpoint) {}

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'x-bootorch-actor': `cli:${safeUser()}` };
    if (this.endpoint.token) h.authorization = `Bearer ${this.endpoint.token}`;
    if (this.endpoint.tenant) h['cray-tenant-name'] = this.endpoint.tenant;
    return h;
  }

  /** Run a query or mutation; GraphQL errors become a CliError naming the code and field. */
  async request<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.headers() },
        body: JSON.stringify({ query, variables }),
        signal: AbortSignal.timeout(60_000),
      });
    } catch (e) {
      throw this.unreachable(e);
    }
    if (res.status === 401) throw this.refused(`${res.status} ${res.statusText}`);
    let body: { data?: T; errors?: GraphQLErrorShape[] };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      if (res.status === 403) throw this.refused(`${res.status} ${res.statusText}`);
      if (TRANSIENT_STATUSES.has(res.status)) {
        const retryAfter = Number(res.headers.get('retry-after')) || undefined;
        throw new CliError(`${this.endpoint.url} answered ${res.status} ${res.statusText}`, EXIT_UNREACHABLE, {
          retryAfterSeconds: retryAfter,
        });
      }
      throw new CliError(`${this.endpoint.url} answered ${res.status} without GraphQL: is this a bootorch API?`, EXIT_UNREACHABLE);
    }
    if (body.errors?.length) throw this.graphqlError(body.errors);
    if (res.status === 403) throw this.refused(`${res.status} ${res.statusText}`);
    if (!body.data) throw new CliError(`${this.endpoint.url} answered ${res.status} without data`, EXIT_UNREACHABLE);
    return body.data;
  }

  /**
   * Subscribe; `onNext` gets `data` of each result. Resolves when the server completes the stream,
   * rejects with a CliError when it fails or the connection is lost. Returns a handle to stop it.
   */
  subscribe<T = any>(query: string, variables: Record<string, unknown>, onNext: (data: T) => void): { done: Promise<void>; stop(): void } {
    this.ws ??= createClient({
      url: this.endpoint.url.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: this.headers(),
      lazy: true,
      retryAttempts: 0,
      keepAlive: 15_000,
    });
    let stop = () => {};
    const done = new Promise<void>((resolve, reject) => {
      stop = this.ws!.subscribe<T>(
        { query, variables },
        {
          next: (r) => {
            if (r.errors?.length) reject(this.graphqlError(r.errors as GraphQLErrorShape[]));
            else if (r.data) onNext(r.data as T);
          },
          error: (e) => reject(Array.isArray(e) ? this.graphqlError(e as GraphQLErrorShape[]) : this.lost(e)),
          complete: () => resolve(),
        },
      );
    });
    return { done, stop: () => stop() };
  }

  /** Drop the WebSocket (the next subscribe opens a new one). */
  async reset(): Promise<void> {
    const ws = this.ws;
    this.ws = undefined;
    await ws?.dispose();
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private unreachable(e: unknown): CliError {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why =
      cause?.code === 'ECONNREFUSED'
        ? 'connection refused'
        : cause?.code === 'ENOTFOUND'
          ? 'unknown host'
          : (e as Error).name === 'TimeoutError'
            ? 'no answer within 60 s'
            : (cause?.message ?? (e as Error).message);
    return new CliError(
      `cannot reach the bootorch API at ${this.endpoint.url} (${why}). Is it running? Set --url or BOOTORCH_URL.`,
      EXIT_UNREACHABLE,
      {},
    );
  }

  private refused(detail: string): CliError {
    const hint = !this.endpoint.token
      ? 'the API wants a token: give --token or set BOOTORCH_TOKEN'
      : this.endpoint.tokenSource?.startsWith('--') || this.endpoint.tokenSource === 'BOOTORCH_TOKEN'
        ? 'the token was refused: check --token or BOOTORCH_TOKEN'
        : `the token in ${this.endpoint.tokenSource} was refused (stale from an earlier run?): give --token or set BOOTORCH_TOKEN`;
    return new CliError(`${hint} (${detail})`, EXIT_UNREACHABLE);
  }

  private lost(e: unknown): CliError {
    const ev = e as { code?: number; reason?: string; message?: string };
    if (ev?.code === 4401 || ev?.code === 4403) return this.refused(`WebSocket closed ${ev.code} ${ev.reason ?? ''}`.trim());
    if (typeof ev?.code === 'number')
      return new CliError(
        `the live connection to ${this.endpoint.url} closed (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})`,
        EXIT_UNREACHABLE,
        {},
      );
    return this.unreachable(e);
  }

  private graphqlError(errors: GraphQLErrorShape[]): CliError {
    const first = errors[0]!;
    const code = first.extensions?.code;
    if (code === 'UNAUTHENTICATED') return this.refused(`${code}: ${first.message}`);
    // The token was taken; what it asked is not its role's (the API's message says whose it is).
    if (code === 'FORBIDDEN') return new CliError(`${first.message} [${code}]`);
    if (code === 'UNAVAILABLE')
      return new CliError(`${first.message} [${code}]`, EXIT_UNREACHABLE, { retryAfterSeconds: first.extensions?.retryAfter });
    const more = (first.extensions?.issues ?? [])
      .slice(1)
      .map((i) => `\n  ${i.field ? `${i.field}: ` : ''}${i.message}`)
      .join('');
    return new CliError(`${first.message}${code && code !== 'INTERNAL_SERVER_ERROR' ? ` [${code}]` : ''}${more}`);
  }
}

function safeUser(): string {
  try {
    return os.userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}
