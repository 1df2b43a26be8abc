/**
 * The HTTP core every CSM client uses: base URL, bearer token (a string, or a file re-read on every
 * request so rotated tokens are picked up) sent only to the base URL's origin, CA bundle through an
 * undici Agent, a per-attempt read timeout from configure(), redirects followed hop by hop, small
 * bounded retries with backoff on 5xx, connection errors and timeouts, zod on every response body,
 * and failures as ServiceError naming the service, endpoint, status and the RFC 7807 detail. With an
 * OutboundGuard it fetches operator-written URLs (src/adapters/outbound.ts).
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { Agent, request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { ServiceError, type ServiceName } from './errors.ts';
import { OutboundRefused, type OutboundGuard } from './outbound.ts';

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

/** Answers that send the request on to their Location (as fetch follows them), at most MAX_REDIRECTS times. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;

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
  /** The origin of the configured base URL: the only one the credential is sent to. */
  private readonly origin: string | undefined;

  /**
   * With `guard`, the client fetches URLs that operators write (image manifests): every URL and every
   * redirect hop must pass the guard, answers are read up to its byte limit, and errors say only the
   * status, never the answer's body.
   */
  constructor(
    readonly service: ServiceName,
    private readonly ep: ServiceEndpoint,
    private readonly timeoutMs: () => number,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    private readonly guard?: OutboundGuard,
  ) {
    // Read once at start: a missing CA file is a deployment error to report at once, not per call.
    // Our own pool, not the global dispatcher: once Node's own fetch has run in the process, the global
    // one is Node's bundled undici, which this undici cannot drive (UND_ERR_INVALID_ARG).
    this.agent = new Agent(ep.caFile ? { connect: { ca: readFileSync(ep.caFile, 'utf8') } } : {});
    this.origin = URL.canParse(ep.url) ? new URL(ep.url).origin : undefined;
  }

  url(path: string, query?: HttpRequest<unknown>['query']): string {
    const base = /^https?:\/\//i.test(path) ? path : `${this.ep.url.replace(/\/+$/, '')}${path}`;
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
    const timeout = this.timeoutMs();
    // Operator-written URLs get one deadline for the whole exchange, so a slow drip cannot hold a
    // request open far past the read timeout (which only bounds the gaps between chunks).
    const deadline = this.guard ? AbortSignal.timeout(timeout) : undefined;
    let url: URL;
    try {
      url = new URL(this.url(r.path, r.query));
    } catch {
      throw fail(`not a URL: ${r.path}`, undefined, false);
    }
    let method: string = r.method;
    let body = r.body === undefined ? undefined : JSON.stringify(r.body);
    let status: number;
    let raw: Record<string, string | string[] | undefined>;
    let text: string;
    for (let hop = 0; ; hop++) {
      const dispatcher = this.dispatcherFor(url, hop, fail);
      const headers: Record<string, string> = { accept: r.text ? '*/*' : 'application/json' };
      // The credential goes to its own service's origin only: not to an absolute URL elsewhere, and
      // not after a redirect to another origin (each hop is judged by its own origin).
      if (url.origin === this.origin) {
        const token = await this.token(r.endpoint);
        if (token) headers.authorization = `Bearer ${token}`;
      }
      if (body !== undefined) headers['content-type'] = 'application/json';
      try {
        // undici's request, not fetch: fetch's web streams, Request/Response objects and abort signal
        // were a tenth of the worker's CPU on the real path (pages of 2,800 nodes, many calls a second).
        // The read timeout is per attempt: for the answer's head, then between chunks of its body.
        const res = await request(url, {
          method: method as Dispatcher.HttpMethod,
          headers,
          dispatcher,
          headersTimeout: timeout,
          bodyTimeout: timeout,
          signal: deadline,
          body,
        });
        status = res.statusCode;
        raw = res.headers;
        const location = typeof raw.location === 'string' ? raw.location : undefined;
        // Redirects are followed here, not by undici, so every hop passes the credential rule and
        // the guard (a gateway may send a path on with 307 or 308).
        if (REDIRECT_STATUSES.has(status) && location) {
          await res.body.dump();
          if (hop >= MAX_REDIRECTS) throw fail(`more than ${MAX_REDIRECTS} redirects`, status, false);
          url = new URL(location, url);
          if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
            method = method === 'HEAD' ? method : 'GET';
            body = undefined;
          }
          continue;
        }
        text = await readBody(res.body, this.guard?.maxBytes);
        break;
      } catch (e) {
        if (e instanceof ServiceError) throw e;
        throw fail(...transportFailure(e, timeout, deadline));
      }
    }
    const answer = <D>(data: D): HttpResponse<D> => ({ status, headers: toHeaders(raw), data });
    if (r.accept?.includes(status)) return answer(undefined as T);
    if (status < 200 || status >= 300) {
      // An operator-written URL's answer is not echoed: it may be an internal page.
      const detail = this.guard ? STATUS_CODES[status] || 'no detail' : problemDetail(text, STATUS_CODES[status] ?? '');
      throw fail(detail, status, status >= 500 || status === 429);
    }
    if (!r.schema) return answer(undefined as T);
    let parsedBody: unknown = text;
    if (!r.text) {
      try {
        parsedBody = JSON.parse(text);
      } catch {
        throw fail(`response is not JSON${this.guard ? '' : `: ${text.slice(0, 200)}`}`, status, false);
      }
    }
    const parsed = r.schema.safeParse(parsedBody);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw fail(`unexpected response: ${i?.path.join('.') || '(body)'}: ${i?.message}`, status, false);
    }
    return answer(parsed.data);
  }

  /** The pool for one hop: the guard's (which may refuse the URL), or the client's own. */
  private dispatcherFor(url: URL, hop: number, fail: (d: string, s?: number, t?: boolean) => ServiceError): Dispatcher {
    if (!this.guard) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail(`not an http(s) URL: ${url.protocol}`, undefined, false);
      return this.agent;
    }
    try {
      return this.guard.dispatcherFor(url);
    } catch (e) {
      if (!(e instanceof OutboundRefused)) throw e;
      throw fail(hop ? `redirect to ${url.origin}: ${e.message}` : e.message, undefined, false);
    }
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

  /** Closes the client's pool, and the guard it was given. */
  async close(): Promise<void> {
    await Promise.all([this.agent.close(), this.guard?.close()]);
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

/** The answer's body as text; past `maxBytes` (when given) it is abandoned, not read on. */
async function readBody(body: Dispatcher.ResponseData['body'], maxBytes?: number): Promise<string> {
  if (maxBytes === undefined) return body.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new TooLarge(maxBytes);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

class TooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`answer is larger than ${maxBytes} bytes`);
  }
}

/** A failed exchange's detail and whether retrying may help. */
function transportFailure(e: unknown, timeoutMs: number, deadline?: AbortSignal): [string, undefined, boolean] {
  if (e instanceof TooLarge) return [e.message, undefined, false];
  const code = (e as { code?: string }).code;
  const cause = (e as { cause?: unknown }).cause;
  const refusal = [e, cause].find((x) => x instanceof OutboundRefused);
  if (refusal) return [(refusal as Error).message, undefined, false];
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || deadline?.aborted)
    return [`timeout: no response within ${timeoutMs / 1000} s`, undefined, true];
  const c = cause as { code?: string; message?: string } | undefined;
  return [`connection failed: ${c?.code ?? code ?? c?.message ?? (e as Error).message}`, undefined, true];
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
