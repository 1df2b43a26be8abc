/**
 * Auth outcomes as the GraphQLErrors the API throws (style: access failures are thrown with
 * `extensions.code`, never returned as schema data). `extensions.http` sets the HTTP status and
 * headers in Apollo Server; Apollo strips it from the response body.
 */
import { GraphQLError } from 'graphql';
import { unavailableExtensions } from '../api/unavailable.ts';
import type { AuthzError, AuthzResult } from './authorize.ts';
import type { AuthFailure } from './principal.ts';
import type { RateLimitResult } from './rate-limit.ts';

type Failed<T> = Extract<T, { ok: false }>;

/** A failed authentication: 401 UNAUTHENTICATED, or 503 UNAVAILABLE (Retry-After) when the identity provider or token store is unreachable. */
export function authFailureError(f: AuthFailure): GraphQLError {
  const down = f.failure === 'idp-unavailable';
  if (down) {
    const u = unavailableExtensions();
    return new GraphQLError(`authentication unavailable: ${f.message}; retry in ${u.retryAfter} s`, {
      extensions: {
        ...u,
        reason: f.failure,
        http: { status: 503, headers: new Map([...u.http.headers, ['www-authenticate', 'Bearer realm="bootorch"']]) },
      },
    });
  }
  return new GraphQLError(`not authenticated: ${f.message}`, {
    extensions: {
      code: 'UNAUTHENTICATED',
      reason: f.failure,
      http: { status: 401, headers: new Map([['www-authenticate', 'Bearer realm="bootorch"']]) },
    },
  });
}

/** A refused authorization: 401 UNAUTHENTICATED or 403 FORBIDDEN. */
export function authzError(r: Failed<AuthzResult> | AuthzError): GraphQLError {
  return new GraphQLError(r.code === 'FORBIDDEN' ? `forbidden: ${r.reason}` : `not authenticated: ${r.reason}`, {
    extensions: { code: r.code, http: { status: r.code === 'FORBIDDEN' ? 403 : 401 } },
  });
}

/** 429 RATE_LIMITED with Retry-After (header and `extensions.retryAfterSeconds`, for WebSocket clients). */
export function rateLimitError(r: Failed<RateLimitResult>): GraphQLError {
  return new GraphQLError(r.reason, {
    extensions: {
      code: 'RATE_LIMITED',
      retryAfterSeconds: r.retryAfterSeconds,
      http: { status: 429, headers: new Map([['retry-after', String(r.retryAfterSeconds)]]) },
    },
  });
}

/** Throws the matching GraphQLError unless the result is ok; for one-line checks in resolvers. */
export function throwUnlessOk(r: AuthzResult | RateLimitResult): void {
  if (r.ok) return;
  if (r.code === 'RATE_LIMITED') throw rateLimitError(r);
  throw authzError(r);
}
