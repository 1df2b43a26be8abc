/**
 * Auth outcomes as the GraphQLErrors the API throws (style: access failures are thrown with
 * `extensions.code`, never returned as schema data). `extensions.http` sets the HTTP status and
 * headers in Apollo Server; Apollo strips it from the response body.
 */
import { GraphQLError } from 'graphql';
import type { AuthzError, AuthzResult } from './authorize.ts';
import type { AuthFailure } from './principal.ts';
import type { RateLimitResult } from './rate-limit.ts';

type Failed<T> = Extract<T, { ok: false }>;

/** A failed authentication: 401 UNAUTHENTICATED, or 503 when the identity provider is unreachable. */
export function authFailureError(f: AuthFailure): GraphQLError {
  const down = f.failure === 'idp-unavailable';
  return new GraphQLError(down ? `authentication unavailable: ${f.message}` : `not authenticated: ${f.message}`, {
    extensions: {
      code: down ? 'SERVICE_UNAVAILABLE' : 'UNAUTHENTICATED',
      reason: f.failure,
      http: { status: down ? 503 : 401, headers: new Map([['www-authenticate', 'Bearer realm="bootorch"']]) },
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
