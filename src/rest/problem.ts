/**
 * RFC 7807 problem documents, as BOS answers errors (`application/problem+json` with type, title,
 * status, detail; the clients print `detail`). The titles are the contract's fixed ones per status.
 * Every error the shared resolvers throw (GraphQLError with `extensions.code`) maps to one status here,
 * and a bad-input error's fields are named in BOS's spelling (`boot_sets.compute.node_list[3]`).
 */
import type { Response } from 'express';
import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS, UNAVAILABLE, unavailableMessage } from '../api/unavailable.ts';
import { bosField, bosWords } from './names.ts';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'The resource was not found',
  405: 'Method Not Allowed',
  409: 'The update was not allowed due to a conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'An Internal Server Error occurred handling the request',
  503: 'Service Unavailable',
};

/** POST /v2/sessions answers a name clash with the contract's AlreadyExists title. */
export const ALREADY_EXISTS = 'The resource to be created already exists';

/** An error a handler throws on purpose: becomes a problem document with this status. */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly title?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const notFound = (what: string, name: string) => new Problem(404, `no ${what} "${name.slice(0, 127)}"`);

const STATUS_OF_CODE: Record<string, number> = {
  BAD_USER_INPUT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  RATE_LIMITED: 429,
  UNAVAILABLE: 503,
  PAYLOAD_TOO_LARGE: 413,
};

interface IssueLike {
  field: string;
  message: string;
}

/** A resolver's error as a Problem (unknown errors: null, the caller answers 500 and logs it). */
export function problemOf(e: unknown, o: { conflictTitle?: string } = {}): Problem | null {
  if (e instanceof Problem) return e;
  if (isDatabaseUnavailable(e)) return new Problem(503, unavailableMessage(e), undefined, { 'retry-after': String(RETRY_AFTER_SECONDS) });
  // The resolvers are called directly (src/rest/call.ts), so their errors arrive as thrown, not wrapped.
  if (!(e instanceof GraphQLError)) return null;
  const code = String(e.extensions.code ?? '');
  const status = STATUS_OF_CODE[code];
  if (!status) return null;
  const headers: Record<string, string> = {};
  if (code === 'RATE_LIMITED') headers['retry-after'] = String(e.extensions.retryAfterSeconds ?? 1);
  if (code === UNAVAILABLE) headers['retry-after'] = String(e.extensions.retryAfter ?? RETRY_AFTER_SECONDS);
  if (code === 'UNAUTHENTICATED') headers['www-authenticate'] = 'Bearer realm="bootorch"';
  const issues = e.extensions.issues as IssueLike[] | undefined;
  let detail = bosWords(e.message);
  if (code === 'BAD_USER_INPUT' && issues?.length) {
    const lead = /^Session template fails check: /.test(e.message) ? 'Session template fails check: ' : '';
    detail = lead + issues.map((i) => (i.field ? `${bosField(i.field)}: ${bosWords(i.message)}` : bosWords(i.message))).join('; ');
  }
  return new Problem(status, detail, status === 409 ? o.conflictTitle : undefined, headers);
}

/** Send a problem document. */
export function sendProblem(res: Response, p: Problem): void {
  for (const [k, v] of Object.entries(p.headers)) res.setHeader(k, v);
  res
    .status(p.status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: 'about:blank',
        title: p.title ?? TITLES[p.status] ?? 'Error',
        status: p.status,
        detail: p.detail,
      }),
    );
}

/** Any thrown value as a problem; what we did not mean to show is a bare 500, its detail logged. */
export function sendError(res: Response, e: unknown, logger?: Logger, o: { conflictTitle?: string } = {}): void {
  const p = problemOf(e, o);
  if (p) return sendProblem(res, p);
  logger?.error({ err: e }, 'internal error in a REST handler');
  sendProblem(res, new Problem(500, 'internal server error'));
}
