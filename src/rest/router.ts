/**
 * The BOS v2 REST door: every path of BOS v2's contract, mounted by src/api/server.ts both under
 * `/apis/bos` (the gateway form the cray CLI, SAT and bos-reporter use) and at the root (`/v2/...`, the
 * in-mesh form, and `/`, the versions document). Each request gets the same context a GraphQL request
 * gets (identity from the same Authorization and Cray-Tenant-Name headers), and each handler calls the
 * same root fields (src/rest/call.ts). Errors are BOS's RFC 7807 problem documents.
 */
import type http from 'node:http';
import express from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import type { ApiContext } from '../api/context.ts';
import { principalOf } from '../api/edge.ts';
import { jsonReader } from '../api/input-bounds.ts';
import { caller, rootFields } from './call.ts';
import { Problem, sendError, sendProblem } from './problem.ts';
import type { RestRequest, Route } from './route.ts';
import { componentRoutes } from './components.ts';
import { sessionRoutes } from './sessions.ts';
import { systemRoutes } from './system.ts';
import { templateRoutes } from './templates.ts';
import { consoleRoutes } from './consoles.ts';
import { rescueRoutes } from './rescue.ts';

export const ROUTES: readonly Route[] = [...systemRoutes, ...templateRoutes, ...sessionRoutes, ...componentRoutes];
/** bootorch's own routes beside BOS's contract (`/bootorch/v1/...`), served by the same door. */
export const EXTENSION_ROUTES: readonly Route[] = [...consoleRoutes, ...rescueRoutes];

export interface BosRestOptions {
  schema: GraphQLSchema;
  /** The GraphQL door's context for a request (the server's identify + createContext). */
  contextFor(req: http.IncomingMessage): Promise<ApiContext>;
  logger?: Logger;
  /** Largest accepted body, and the largest without a valid credential. */
  maxBodyBytes: number;
  anonymousMaxBodyBytes: number;
  /** The limit of answers that need no credential and reach no handler (405, unknown /v2 paths). */
  limit?: express.RequestHandler;
}

/** The first value of each query parameter (BOS uses only the first filter of each type); an empty one is not given, as in BOS. */
function firstValues(q: unknown): RestRequest['query'] {
  const out: RestRequest['query'] = {};
  for (const [k, v] of Object.entries((q ?? {}) as Record<string, unknown>)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string' && first !== '') out[k] = first;
  }
  return out;
}

function bodyProblem(err: Error & { status?: number; limit?: string }): Problem {
  if (err.limit) return new Problem(err.status ?? 400, err.message); // a bound's own words (input-bounds.ts)
  if (err.status === 413) return new Problem(413, 'request body too large');
  return new Problem(400, `the body is not valid JSON: ${err.message.slice(0, 200)}`);
}

export function bosRestRouter(o: BosRestOptions): express.Router {
  const router = express.Router();
  const fields = rootFields(o.schema);
  // Bodies are JSON whatever their content type says (clients differ); parsed per route, so that
  // nothing here touches requests for other paths (/graphql parses its own).
  const read = jsonReader({ anyType: true, strict: false });
  const limit = o.limit ?? ((_req, _res, next) => next());

  // Who is calling (and their rate limit) first, then the body, within that caller's limit: nothing
  // is read for a refused caller, and no more than the anonymous limit without a valid credential.
  const serve =
    (route: Route): express.RequestHandler =>
    async (req, res) => {
      let ctx: ApiContext;
      try {
        ctx = await o.contextFor(req);
      } catch (e) {
        return sendError(res, e, o.logger, { conflictTitle: route.conflictTitle });
      }
      const anonymous = !principalOf(ctx);
      const body = await read(req, anonymous ? Math.min(o.maxBodyBytes, o.anonymousMaxBodyBytes) : o.maxBodyBytes, anonymous);
      if ('error' in body) return sendProblem(res, bodyProblem(body.error));
      try {
        const params = Object.fromEntries(Object.entries(req.params as Record<string, string>));
        const reply = await route.handler({ params, query: firstValues(req.query), body: body.body, call: caller(fields, ctx) });
        if (reply.body === undefined) res.status(reply.status).end();
        else res.status(reply.status).json(reply.body);
      } catch (e) {
        sendError(res, e, o.logger, { conflictTitle: route.conflictTitle });
      }
    };

  for (const route of [...ROUTES, ...EXTENSION_ROUTES]) router[route.method](route.path, serve(route));
  // A known path with another method: 405 with the methods it takes, as connexion answers.
  const methods = new Map<string, string[]>();
  for (const r of ROUTES) methods.set(r.path, [...(methods.get(r.path) ?? []), r.method.toUpperCase()]);
  for (const [path, allowed] of methods) {
    router.all(path, limit, (req, res) => {
      res.setHeader('allow', allowed.join(', '));
      sendProblem(res, new Problem(405, `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}`));
    });
  }
  router.all('/v2/*rest', limit, (req, res) => sendProblem(res, new Problem(404, `no BOS v2 route ${req.path}`)));
  // What express itself refuses on these routes (a path that does not decode, ...), as a problem too.
  router.use((err: Error & { status?: number }, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) return next(err);
    const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) o.logger?.error({ err }, 'internal error in the BOS REST door');
    sendProblem(res, new Problem(status, status === 500 ? 'internal server error' : err.message.slice(0, 200)));
  });
  return router;
}
