/**
 * The web console (web/, built by `npm run build:web` into web/dist) served by the API on its own
 * origin: `GET /` for a browser (Accept: text/html), `/assets/*` for its files, and
 * `GET /console/dev-token`. Everything else passes through, so `/` for a BOS client (Accept: JSON or
 * anything but HTML first) is still BOS's versions document, and /graphql, /healthz, /metrics,
 * /apis/bos and /v2 are untouched. The console's own pages are hash routes (`/#/node/x…`).
 *
 * /console/dev-token answers only in dev auth mode (`npm start`) and only to a loopback client that
 * came straight in (no X-Forwarded-For / Forwarded header: a local reverse proxy would make any remote
 * client look local); otherwise 404. And only on the API's own origin: `Host` (and `Origin`, when
 * sent) must be 127.0.0.1, localhost or [::1] with the port the request came in on, else 403. A page
 * on another name that resolves to 127.0.0.1 (DNS rebinding) reaches the socket as a loopback
 * client, but its requests carry that name. It hands out the admin token `npm start` already prints
 * and keeps in .data/dev-admin-token for the same machine.
 *
 * Every route here needs no credential: each takes from the caller's `limit` first (edge.ts limitOpen).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { TLSSocket } from 'node:tls';
import type { Authenticator } from '../auth/index.ts';

export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface ConsoleOptions {
  /** Built console (default web/dist). */
  dist?: string;
  /** The API's authenticator: the dev token is offered only when it is in dev mode. */
  authenticator?: Authenticator;
  /** The rate limit of routes without a credential (default none). */
  limit?: express.RequestHandler;
}

function directLoopback(req: express.Request): boolean {
  return LOOPBACK.has(req.socket.remoteAddress ?? '') && !req.headers['x-forwarded-for'] && !req.headers.forwarded;
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether Host, and Origin when sent, name this API on loopback: the port the request came in on, the scheme it used. */
function ownOrigin(req: express.Request): boolean {
  const tls = (req.socket as TLSSocket).encrypted === true;
  const port = req.socket.localPort;
  const loopback = (host: string, p: string) =>
    LOOPBACK_NAMES.has(host.toLowerCase()) && (p === '' ? port === (tls ? 443 : 80) : Number(p) === port);
  const h = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d+))?$/.exec(req.headers.host ?? '');
  if (!h || !loopback(h[1]!, h[2] ?? '')) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const u = new URL(origin);
    return u.protocol === (tls ? 'https:' : 'http:') && u.origin === origin && loopback(u.hostname, u.port);
  } catch {
    return false; // `null` (a sandboxed or file: page) and anything else that is no origin
  }
}

const NOT_BUILT = `<!doctype html><title>bootorch console</title><p>The web console is not built here. Run
<code>npm run build:web</code> (npm start does it) and reload. The API is at <a href="/graphql">/graphql</a>.</p>`;

export function consoleRouter(o: ConsoleOptions = {}): express.Router {
  const dist = o.dist ?? CONSOLE_DIST;
  const router = express.Router();
  const limit = o.limit ?? ((_req, _res, next) => next());

  router.get('/console/dev-token', limit, (req, res) => {
    const a = o.authenticator;
    if (a?.mode !== 'dev' || !a.devAdminToken || !directLoopback(req)) {
      res.status(404).json({ error: 'no dev token here (dev auth mode, loopback clients only)' });
      return;
    }
    if (!ownOrigin(req)) {
      const port = req.socket.localPort;
      res.status(403).json({
        error: `the dev token is served only to this API's own origin (Host and Origin 127.0.0.1:${port}, localhost:${port} or [::1]:${port})`,
      });
      return;
    }
    res.set('cache-control', 'no-store').json({ token: a.devAdminToken });
  });

  // Hashed file names: cache for a year. Unknown files are a 404 here, not a BOS problem document.
  router.use(
    '/assets',
    limit,
    express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }),
  );

  router.get('/', (req, res, next) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) !== 'html') return next();
    limit(req, res, (e?: unknown) => (e ? next(e) : serveIndex(res)));
  });
  const serveIndex = (res: express.Response) => {
    const index = path.join(dist, 'index.html');
    res.set('cache-control', 'no-cache');
    if (!existsSync(index)) {
      res.status(503).type('html').send(NOT_BUILT);
      return;
    }
    res.sendFile(index);
  };
  return router;
}
