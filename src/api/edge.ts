/**
 * The edge of the API: what every request goes through before GraphQL sees it, over HTTP and
 * graphql-ws alike, cheapest first, so that nothing expensive runs for a caller who may not run it:
 *
 *   1. who is calling (headers only; a database lookup for API tokens). Every credential is looked
 *      up: a valid one is never refused for what others sent from its address;
 *   2. the rate limit: the principal's bucket, or the client address's (one bucket for requests
 *      without a credential, one for failed authentications: only failing attempts spend it and only
 *      they are refused when it is empty), 429 with Retry-After; over graphql-ws a RATE_LIMITED error
 *      (or close 4429 at connect);
 *   3. the body (input-bounds.ts), at most `anonymousMaxBodyBytes` without a valid credential, counted
 *      as it arrives, and JSON nested at most MAX_JSON_DEPTH deep;
 *   4. the document against the caller's budget (limits.ts: tokens, nesting, fragments, cost, depth,
 *      aliases, directives, each linear), introspection only with a credential, no subscription over
 *      HTTP, and a persisted query's hash checked. Refusals are typed 400s.
 *
 * Only then does Apollo (or graphql-ws) parse, validate and execute. Routes that need no credential
 * and skip these steps (/healthz, the console, unknown paths) take from a generous per-address bucket
 * of their own (`limitOpen`). graphql-ws connections are
 * authenticated once, at connection_init: without a valid credential the socket is closed with 4403
 * (graphql-ws's Forbidden); a credential that ends later closes it with 4401 (credential-watch.ts).
 */
import type http from 'node:http';
import type express from 'express';
import proxyaddr from 'proxy-addr';
import type { DocumentNode, GraphQLSchema, GraphQLError as GraphQLErrorType } from 'graphql';
import type { Logger } from 'pino';
import {
  authFailureError,
  authzError,
  isAuthFailure,
  POLICY,
  type Principal,
  type RateLimiter,
  type RateLimitResult,
} from '../auth/index.ts';
import { checkDocument, scanDocument, usesIntrospection, type DocumentCheck, type QueryLimits } from './limits.ts';
import type { Identify, Identity } from './context.ts';
import type { CredentialWatch } from './credential-watch.ts';
import { countRefusal } from './metrics.ts';
import { addressKey, CheckCache, gql, rootFields, runtimeError, sha256 } from './edge-support.ts';
import { jsonReader, jsonTooDeep, tooDeep } from './input-bounds.ts';

export interface EdgeOptions {
  schema: GraphQLSchema;
  identify: Identify;
  limiter?: RateLimiter;
  /** The per-address bucket of routes that need no credential and skip the edge (limitOpen). */
  openLimiter?: RateLimiter;
  /** The authenticated budget, and the one for requests without a valid credential. */
  limits: QueryLimits;
  anonymousLimits: QueryLimits;
  maxBodyBytes: number;
  anonymousMaxBodyBytes: number;
  /** Apollo's persisted-query store, to check hash-only requests against the caller's budget. */
  persisted?: { get(key: string): Promise<string | undefined> };
  /** Express's `trust proxy` value: which proxies' X-Forwarded-For to believe (default none). */
  trustProxy?: boolean | number | string | string[];
  /** Ends graphql-ws connections whose credential ends. */
  watch?: CredentialWatch;
  logger?: Logger;
}

/** What the edge decided about one request, kept for Apollo's context. */
export interface Admitted {
  identity: Identity;
  authenticated: boolean;
}

/** A caller is authenticated when the credential was accepted (a tenant refusal still counts: it is theirs). */
export function principalOf(identity: Identity): Principal | null {
  const p = identity.auth?.principal;
  return p && !isAuthFailure(p) ? p : null;
}

type Admission = Awaited<ReturnType<Edge['admit']>>;

export class Edge {
  private readonly o: EdgeOptions;
  private readonly admitted = new WeakMap<http.IncomingMessage, Admitted>();
  /** Admissions already decided for a request (fast-reports.ts admits before express), so each request is admitted once. */
  private readonly admissions = new WeakMap<http.IncomingMessage, Promise<Admission>>();
  /** Bodies already read (fast-reports.ts), as body-parser would have left them: parsed, or its 400. */
  private readonly bodies = new WeakMap<http.IncomingMessage, { body: unknown } | { error: Error }>();
  private readonly readJson = jsonReader();
  private readonly checks = new CheckCache();
  private readonly trust: (addr: string, i: number) => boolean;

  constructor(o: EdgeOptions) {
    this.o = o;
    const t = o.trustProxy ?? false;
    this.trust = typeof t === 'boolean' ? () => t : typeof t === 'number' ? (_a, i) => i < t : proxyaddr.compile(t);
  }

  /** The client address of a request (HTTP or a WebSocket upgrade). */
  address(req: http.IncomingMessage): string {
    try {
      return addressKey(proxyaddr(req, this.trust));
    } catch {
      return addressKey(req.socket?.remoteAddress);
    }
  }

  /** The identity the edge found for this request (Apollo's context uses it; no second lookup). */
  identityOf(req: http.IncomingMessage): Identity | undefined {
    return this.admitted.get(req)?.identity;
  }

  /**
   * Steps 1-2: who is calling, and whether the rate limit lets them. Returns the identity, or the
   * refusal.
   */
  async admit(
    req: http.IncomingMessage,
  ): Promise<{ ok: true; admitted: Admitted } | { ok: false; refusal: Extract<RateLimitResult, { ok: false }> | GraphQLErrorType }> {
    const limiter = this.o.limiter;
    const address = this.address(req);
    // No refusal before the lookup: the address of a flood of bad tokens is also a valid admin's.
    let identity: Identity;
    try {
      identity = await this.o.identify(req);
    } catch (e) {
      if (e instanceof Error && 'extensions' in e) return { ok: false, refusal: e as GraphQLErrorType };
      throw e;
    }
    const principal = principalOf(identity);
    if (limiter) {
      const p = identity.auth?.principal;
      // The identity provider being down is not the caller's doing: not counted against the address.
      const failed = p && isAuthFailure(p) && p.failure !== 'missing';
      const r = principal
        ? await limiter.take(principal)
        : p && isAuthFailure(p) && p.failure === 'idp-unavailable'
          ? null
          : await limiter.take({ address, failed: !!failed });
      if (r && !r.ok) {
        countRefusal('rate_limited');
        return { ok: false, refusal: r };
      }
    }
    return { ok: true, admitted: { identity, authenticated: principal !== null } };
  }

  /** admit(), once per request: a second call (express after the fast path let it go) gets the first's answer. */
  admitOnce(req: http.IncomingMessage): Promise<Admission> {
    let a = this.admissions.get(req);
    if (!a) {
      a = this.admit(req).then((r) => {
        if (r.ok) this.admitted.set(req, r.admitted);
        return r;
      });
      this.admissions.set(req, a);
    }
    return a;
  }

  /**
   * The limit of routes that need no credential and do not pass admit() (/healthz, the console, unknown
   * paths, a WebSocket's upgrade): the `openLimiter` bucket of the client address, whatever headers it
   * sends. The refusal, or null.
   */
  async takeOpen(req: http.IncomingMessage): Promise<Extract<RateLimitResult, { ok: false }> | null> {
    const r = await this.o.openLimiter?.take({ address: this.address(req) });
    if (!r || r.ok) return null;
    countRefusal('rate_limited');
    return r;
  }

  /** takeOpen as express middleware: 429 with Retry-After. */
  limitOpen(): express.RequestHandler {
    return async (req, res, next) => {
      try {
        const r = await this.takeOpen(req);
        if (!r) return next();
        sendRefusal(res, r);
      } catch (e) {
        next(e);
      }
    };
  }

  /** The body of this request was read already (the stream is spent): step 3 takes it from here. */
  bodyRead(req: http.IncomingMessage, r: { body: unknown } | { error: Error }): void {
    this.bodies.set(req, r);
  }

  /**
   * Steps 1-2 for a request outside /graphql (/metrics): the identity, or the refusal as an HTTP
   * answer (429 with Retry-After, or the identify function's error).
   */
  async authenticate(
    req: http.IncomingMessage,
  ): Promise<
    | { ok: true; identity: Identity }
    | { ok: false; status: number; headers: Record<string, string>; error: { message: string; extensions: Record<string, unknown> } }
  > {
    const a = await this.admit(req);
    if (a.ok) return { ok: true, identity: a.admitted.identity };
    const r = a.refusal;
    if ('code' in r && r.code === 'RATE_LIMITED') {
      return {
        ok: false,
        status: 429,
        headers: { 'retry-after': String(r.retryAfterSeconds) },
        error: { message: r.reason, extensions: { code: 'RATE_LIMITED', retryAfterSeconds: r.retryAfterSeconds } },
      };
    }
    const e = r as GraphQLErrorType;
    const { http: status, ...extensions } = e.extensions ?? {};
    return {
      ok: false,
      status: (status as { status?: number } | undefined)?.status ?? 401,
      headers: {},
      error: { message: e.message, extensions },
    };
  }

  /**
   * Without a valid credential only public root fields (version, health) can run: a document asking
   * for any other is refused here, as the resolvers would refuse it, but before its cost is counted.
   */
  private anonymousRefusal(
    identity: Identity,
    document: DocumentNode,
    operationName: string | undefined,
  ): { status: number; error: GraphQLErrorType } | null {
    const op = gql.getOperationAST(document, operationName);
    if (!op) return null; // Apollo says which operation is missing
    const closed = rootFields(document, op).find((f) => !f.startsWith('__') && !(Object.hasOwn(POLICY, f) && POLICY[f]!.min === 'public'));
    if (closed === undefined) return null;
    const p = identity.auth?.principal;
    const e =
      p && isAuthFailure(p)
        ? authFailureError(p)
        : authzError({ ok: false, code: 'UNAUTHENTICATED', reason: 'no credential (Authorization: Bearer <token>)' });
    const { http: h, ...extensions } = e.extensions;
    countRefusal('anonymous_field');
    return {
      status: (h as { status?: number } | undefined)?.status ?? 401,
      error: runtimeError(e.message, { ...extensions, field: closed }),
    };
  }

  /** Step 4 for one document and budget (cached). */
  checkQuery(query: string, authenticated: boolean): DocumentCheck {
    const key = `${authenticated ? 'a' : 'n'}:${sha256(query)}`;
    let r = this.checks.get(key);
    if (!r) {
      r = checkDocument(this.o.schema, query, authenticated ? this.o.limits : this.o.anonymousLimits);
      this.checks.set(key, r);
    }
    if (!r.ok) countRefusal(`limit_${String(r.error.extensions.limit ?? 'syntax')}`);
    if (r.ok && !authenticated && usesIntrospection(r.document)) {
      countRefusal('anonymous_introspection');
      return {
        ok: false,
        error: runtimeError('not authenticated: introspection (__schema, __type) needs a credential', {
          code: 'UNAUTHENTICATED',
          reason: 'missing',
        }),
      };
    }
    return r;
  }

  /**
   * The express middleware for /graphql, in order: admit, body, document. A request the fast path
   * (fast-reports.ts) let go arrives admitted and, perhaps, with its body read: neither happens twice.
   */
  http(): express.RequestHandler[] {
    const o = this.o;
    return [
      async (req, res, next) => {
        try {
          const a = await this.admitOnce(req);
          if (!a.ok) return sendRefusal(res, a.refusal);
          next();
        } catch (e) {
          next(e);
        }
      },
      async (req, _res, next) => {
        try {
          const authenticated = this.admitted.get(req)?.authenticated ?? false;
          const read =
            this.bodies.get(req) ??
            (await this.readJson(req, authenticated ? o.maxBodyBytes : Math.min(o.maxBodyBytes, o.anonymousMaxBodyBytes), !authenticated));
          if ('error' in read) return next(read.error);
          req.body = read.body;
          next();
        } catch (e) {
          next(e);
        }
      },
      async (req, res, next) => {
        try {
          const refusal = await this.checkHttp(req);
          if (refusal) return res.status(refusal.status).json({ errors: [refusal.error.toJSON()] });
          next();
        } catch (e) {
          next(e);
        }
      },
    ];
  }

  private async checkHttp(req: express.Request): Promise<{ status: number; error: GraphQLErrorType } | null> {
    if (req.method !== 'GET' && req.method !== 'POST') return null;
    if (req.method === 'GET') {
      // The JSON in a GET's query string, bounded like a body's before Apollo parses it.
      const q = req.query as Record<string, unknown>;
      for (const k of ['variables', 'extensions']) {
        const v = q[k];
        if (typeof v === 'string' && jsonTooDeep(v)) {
          const e = tooDeep();
          return { status: 400, error: runtimeError(e.message, { code: 'BAD_REQUEST', limit: e.limit, field: k }) };
        }
      }
    }
    const authenticated = this.admitted.get(req)?.authenticated ?? false;
    const params: Record<string, unknown> | undefined =
      req.method === 'POST'
        ? req.body && typeof req.body === 'object' && !Array.isArray(req.body)
          ? req.body
          : undefined
        : (req.query as Record<string, unknown>);
    if (!params) return null; // not a GraphQL request (or a batch): Apollo refuses it without parsing
    let extensions = params.extensions;
    if (typeof extensions === 'string') {
      try {
        extensions = JSON.parse(extensions);
      } catch {
        return null;
      } // Apollo answers 400
    }
    let query = typeof params.query === 'string' ? params.query : undefined;
    const pq = extensions && typeof extensions === 'object' ? (extensions as { persistedQuery?: unknown }).persistedQuery : undefined;
    if (pq !== undefined) {
      const { version, sha256Hash } = (pq ?? {}) as { version?: unknown; sha256Hash?: unknown };
      if (version !== 1 || typeof sha256Hash !== 'string') {
        return {
          status: 400,
          error: runtimeError('persisted query: only version 1 with a sha256Hash is supported', {
            code: 'BAD_REQUEST',
            field: 'extensions.persistedQuery',
          }),
        };
      }
      if (query !== undefined) {
        if (sha256(query) !== sha256Hash.toLowerCase()) {
          return {
            status: 400,
            error: runtimeError('persisted query: sha256Hash does not match the query', {
              code: 'PERSISTED_QUERY_HASH_MISMATCH',
              field: 'extensions.persistedQuery.sha256Hash',
            }),
          };
        }
      } else {
        query = (await this.o.persisted?.get(`apq:${sha256Hash}`)) ?? (await this.o.persisted?.get(sha256Hash));
        if (query === undefined) return null; // Apollo answers PERSISTED_QUERY_NOT_FOUND
      }
    }
    if (query === undefined) return null; // Apollo answers BAD_REQUEST
    const name = typeof params.operationName === 'string' ? params.operationName : undefined;
    if (!authenticated) {
      // Parse within the anonymous budget's size bounds, then refuse closed fields before counting cost.
      const scanned = scanDocument(query, this.o.anonymousLimits);
      if (scanned && !scanned.ok) return { status: 400, error: scanned.error };
      let doc: DocumentNode | undefined;
      try {
        doc = gql.parse(query);
      } catch {
        /* a syntax error: checkQuery says so */
      }
      const closed = doc && this.anonymousRefusal(this.admitted.get(req)!.identity, doc, name);
      if (closed) return closed;
    }
    const c = this.checkQuery(query, authenticated);
    if (!c.ok) {
      const code = c.error.extensions.code;
      return { status: code === 'UNAUTHENTICATED' ? 401 : 400, error: c.error };
    }
    if (gql.getOperationAST(c.document, name)?.operation === 'subscription') {
      return {
        status: 400,
        error: runtimeError('subscriptions are served over graphql-ws (a WebSocket on this same URL), not over HTTP', {
          code: 'BAD_REQUEST',
        }),
      };
    }
    return null;
  }
}

function sendRefusal(res: express.Response, r: Extract<RateLimitResult, { ok: false }> | GraphQLErrorType): void {
  if ('code' in r && r.code === 'RATE_LIMITED') {
    res
      .status(429)
      .set('retry-after', String(r.retryAfterSeconds))
      .json({ errors: [{ message: r.reason, extensions: { code: 'RATE_LIMITED', retryAfterSeconds: r.retryAfterSeconds } }] });
    return;
  }
  const e = r as GraphQLErrorType;
  const http = e.extensions?.http as { status?: number } | undefined;
  const { http: _drop, ...extensions } = e.extensions ?? {};
  res.status(http?.status ?? 401).json({ errors: [{ message: e.message, extensions }] });
}
