/**
 * The web console (web/, built by `npm run build:web` into web/dist) served by the API on its own
 * origin: `GET /` for a browser (Accept: text/html), `/assets/*` for its files, and
 * `GET /console/dev-token`. Everything else passes through, so `/` for a BOS client (Accept: JSON or
 * anything but HTML first) is still BOS's versions document, and /graphql, /healthz, /metrics,
 * /apis/bos and /v2 are untouched. The console's own pages are hash routes (`/#/node/x…`).
 *
 * /console/dev-token answers only in dev auth mode (`npm start`) and only to a loopback client that
 * came straight in (no X-Forwarded-For / Forwarded header: a local reverse proxy would make any remote
 * client look local); otherwise 404. It hands out the admin token `npm start` already prints and keeps
 * in .data/dev-admin-token for the same machine.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { Authenticator } from '../auth/index.ts';

export const CONSOLE_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export interface ConsoleOptions {
  /** Built console (default web/dist). */
  dist?: string;
  /** The API's authenticator: the dev token is offered only when it is in dev mode. */
  authenticator?: Authenticator;
}

function directLoopback(req: express.Request): boolean {
  return LOOPBACK.has(req.socket.remoteAddress ?? '') && !req.headers['x-forwarded-for'] && !req.headers.forwarded;
}

const NOT_BUILT = `<!doctype html><title>bootorch console</title><p>The web console is not built here. Run
<code>npm run build:web</code> (npm start does it) and reload. The API is at <a href="/graphql">/graphql</a>.</p>`;

export function consoleRouter(o: ConsoleOptions = {}): express.Router {
  const dist = o.dist ?? CONSOLE_DIST;
  const router = express.Router();

  router.get('/console/dev-token', (req, res) => {
    const a = o.authenticator;
    if (a?.mode !== 'dev' || !a.devAdminToken || !directLoopback(req)) {
      res.status(404).json({ error: 'no dev token here (dev auth mode, loopback clients only)' });
      return;
    }
    res.set('cache-control', 'no-store').json({ token: a.devAdminToken });
  });

  // Hashed file names: cache for a year. Unknown files are a 404 here, not a BOS problem document.
  router.use('/assets', express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: false }));

  router.get('/', (req, res, next) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) !== 'html') return next();
    const index = path.join(dist, 'index.html');
    res.set('cache-control', 'no-cache');
    if (!existsSync(index)) {
      res.status(503).type('html').send(NOT_BUILT);
      return;
    }
    res.sendFile(index);
  });
  return router;
}
