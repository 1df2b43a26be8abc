/**
 * The HTTP core every CSM client uses: base URL, bearer token (a string, or a file re-read on every
 * request so rotated tokens are picked up), CA bundle through an undici Agent, a per-attempt read
 * timeout from configure(), small bounded retries with backoff on 5xx, connection errors and
 * timeouts, zod on every response body, and failures as ServiceError naming the service, endpoint,
 * status and the RFC 7807 detail.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { Agent, interceptors, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { ServiceError, type ServiceName } from './errors.ts';

export interface ServiceEndpoint {
  /**
   * Base URL up to, not including, the service's own path prefix: HSM paths start /hsm/v2, BSS
   * /boot/v1, CFS /v3, PCS /transitions (so e.g. http://cray-smd, https://gw/apis/smd,
   * http://cray-power-control, https://gw/apis/power-control/v1).
   */
  url: string;
  /** Bearer token, or a file holding it (re-read on every request). */
  token?: string;
  tokenFile?: string;
  /** PEM CA bundle to trust. */
  caFile?: string;
}

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). */
  retries: number;
  /** Backoff before retry n is min(baseMs x 2^(n-1), maxMs) (defaults 200 ms, 2 s). */
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseMs: 200, maxMs: 2000 };

/** 5xx that mean "try again" (as BOS's requests_retry_session). */
const RETRY_STATUSES = new Set([500, 502, 503, 504]);

export interface HttpRequest<T> {
  /** Endpoint name for errors, e.g. 'POST /transitions'. */
  endpoint: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the base URL, or an absolute URL. */
  path: string;
  /** Values that are undefined or null are left out; arrays repeat the key. */
  query?: Record<string, string | number | boolean | string[] | undefined | null>;
  body?: unknown;
  /** Response body schema; omit when the body is not read. */
  schema?: z.ZodType<T>;
  /** Non-2xx statuses the caller handles itself (e.g. 404 = not found); returned with data undefined. */
  accept?: number[];
  /** Read the body as text instead of JSON. */
  text?: boolean;
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

export class ServiceClient {
  /** The client's own connection pool (closed with it). */
  private readonly agent: Agent;
  private readonly dispatcher: Dispatcher;

  constructor(
    readonly service: ServiceName,
    private readonly ep: ServiceEndpoint,
    private readonly timeoutMs: () => number,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    // Read once at start: a missing CA file is a deployment error to report at once, not per call.
    this.agent = new Agent(ep.caFile ? { connect: { ca: readFileSync(ep.caFile, 'utf8') } } : {});
    // Redirects are followed, as fetch did (a gateway may send a path on with 307 or 308). Our own
    // pool, not the global dispatcher: once Node's own fetch has run in the process, the global one is
    // Node's bundled undici, which this undici's interceptors cannot drive (UND_ERR_INVALID_ARG).
    this.dispatcher = this.agent.compose(interceptors.redirect({ maxRedirections: 5 }));
  }

  url(path: string, query?: HttpRequest<unknown>['query']): string {
    const base = /^https?:\/\//.test(path) ? path : `${this.ep.url.replace(/\/+$/, '')}${path}`;
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
    }
    const s = qs.toString();
    return s ? `${base}?${s}` : base;
  }

  async request<T>(r: HttpRequest<T>): Promise<HttpResponse<T>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.once(r);
      } catch (e) {
        // 500/502/503/504, connection errors and read timeouts may pass on a second try; 4xx will not.
        const retryable = e instanceof ServiceError && e.transient && (e.status === undefined || RETRY_STATUSES.has(e.status));
        if (!retryable || attempt >= this.retry.retries) throw e;
        await sleep(Math.min(this.retry.baseMs * 2 ** attempt, this.retry.maxMs));
      }
    }
  }

  private async once<T>(r: HttpRequest<T>): Promise<HttpResponse<T>> {
    const fail = (detail: string, status?: number, transient = true) =>
      new ServiceError(this.service, r.endpoint, detail, status, transient);
    const headers: Record<string, string> = { accept: r.text ? '*/*' : 'application/json' };
    const token = await this.token(r.endpoint);
    if (token) headers.authorization = `Bearer ${token}`;
    if (r.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = this.timeoutMs();
    let status: number;
    let raw: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      // undici's request, not fetch: fetch's web streams, Request/Response objects and abort signal
      // were a tenth of the worker's CPU on the real path (pages of 2,800 nodes, many calls a second).
      // The read timeout is per attempt: for the answer's head, then between chunks of its body.
      const res = await request(this.url(r.path, r.query), {
        method: r.method,
        headers,
        dispatcher: this.dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        body: r.body === undefined ? undefined : JSON.stringify(r.body),
      });
      status = res.statusCode;
      raw = res.headers;
      text = await res.body.text();
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
        throw fail(`timeout: no response within ${timeout / 1000} s`);
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw fail(`connection failed: ${cause?.code ?? code ?? cause?.message ?? (e as Error).message}`);
    }
    const answer = <D>(data: D): HttpResponse<D> => ({ status, headers: toHeaders(raw), data });
    if (r.accept?.includes(status)) return answer(undefined as T);
    if (status < 200 || status >= 300) {
      throw fail(problemDetail(text, STATUS_CODES[status] ?? ''), status, status >= 500 || status === 429);
    }
    if (!r.schema) return answer(undefined as T);
    let body: unknown = text;
    if (!r.text) {
      try {
        body = JSON.parse(text);
      } catch {
        throw fail(`response is not JSON: ${text.slice(0, 200)}`, status, false);
      }
    }
    const parsed = r.schema.safeParse(body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw fail(`unexpected response: ${i?.path.join('.') || '(body)'}: ${i?.message}`, status, false);
    }
    return answer(parsed.data);
  }

  private async token(endpoint: string): Promise<string | undefined> {
    if (this.ep.tokenFile) {
      try {
        return (await readFile(this.ep.tokenFile, 'utf8')).trim();
      } catch (e) {
        throw new ServiceError(this.service, endpoint, `cannot read token file ${this.ep.tokenFile}: ${(e as Error).message}`);
      }
    }
    return this.ep.token || undefined;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** RFC 7807 `detail` (else `title`), else the start of the body, else the status text. */
export function problemDetail(text: string, statusText: string): string {
  try {
    const p = JSON.parse(text) as Record<string, unknown>;
    const d = p.detail || p.title || p.message;
    if (typeof d === 'string' && d) return d;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 300) || statusText || 'no detail';
}

/** An answer's head as the fetch Headers callers read (e.g. BSS's referral token). */
function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) h.append(k, item);
  }
  return h;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
