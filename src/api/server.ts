/**
 * The API process: Apollo Server 5 over express 5, with graphql-ws on the same port and path
 * (/graphql), plus GET /healthz (BOS's healthz, always 200), GET /metrics (prom-client) and the BOS v2
 * REST door (src/rest: /apis/bos/v2/..., /v2/... and /), and the web console (src/api/console.ts: `/` for
 * browsers, /assets, /console/dev-token). Plain HTTP, or HTTPS when given a certificate.
 */
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type pg from 'pg';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { GraphQLFormattedError } from 'graphql';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import type { Database } from '../db/client.ts';
import type { Kicker } from '../engine/kick.ts';
import type { Adapters, ImagesPort } from '../adapters/ports.ts';
import type { ReportBatcher } from '../db/queries/report-batch.ts';
import { buildSchema } from './schema.ts';
import { createContext, identifyFromHeaders, withConnectionParams, type ApiContext, type ApiDeps, type Identify } from './context.ts';
import { LiveFeed } from './live/feed.ts';
import { authIdentify, type ApiAuth } from './auth.ts';
import { isDatabaseUnavailable, unavailableStatusPlugin, UNAVAILABLE_MESSAGE } from './unavailable.ts';
import { withVariableField } from './input-errors.ts';
import { DEFAULT_LIMITS, limitRules, type QueryLimits } from './limits.ts';
import { metricsPlugin, metricsRegistry } from './metrics.ts';
import { health } from './resolvers/system.ts';
import { requestIds, requestLogger } from '../observability/logging.ts';
import { bosRestRouter } from '../rest/router.ts';
import { consoleRouter } from './console.ts';

/**
 * graphql's CommonJS build, the one Apollo, graphql-ws and graphql-tools load. Bundlers that prefer
 * its `module` build (vitest) would otherwise hand graphql-ws a validate() that rejects a schema made
 * by the other copy ("from another module or realm"). Under node/tsx both names are the same module.
 */
const graphqlRuntime = createRequire(import.meta.url)('graphql') as typeof import('graphql');

export interface ApiServerOptions {
  pool: pg.Pool;
  db: Database;
  kicker: Kicker;
  /** 0 picks a free port (see the returned url). */
  port: number;
  host: string;
  logger?: Logger;
  /** Probe for GET /healthz and Query.health; without it the queue reads as unknown. */
  queueHealthy?: () => Promise<boolean>;
  /** Reads image manifests when validating templates and sessions; checks are skipped without it. */
  images?: ImagesPort;
  /** The outside services (dry run, explain). */
  adapters?: Adapters;
  /** Batched node reports (reportBootState). */
  reports?: ReportBatcher;
  /**
   * Authentication (src/api/auth.ts): bearer tokens checked by the authenticator, a per-principal rate
   * limit. Without it (and without `identify`) no request has a principal: only public fields answer.
   */
  auth?: ApiAuth;
  /** Who is calling; default: from `auth`. Every root field is authorized against what it returns. */
  identify?: Identify;
  /** Extra per-request values, found as `context.extras` (HTTP and WebSocket requests alike). */
  contextExtras?: (req: http.IncomingMessage) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Query depth and alias limits (default depth 12, 30 aliases). */
  limits?: Partial<QueryLimits>;
  /** Largest accepted request body (default 16 MiB: a 10,000-component putComponents fits). */
  maxBodyBytes?: number;
  /** Clock for timestamps written through the API (default: the system clock). */
  now?: () => Date;
  /** Feed of the subscriptions (default: one LISTEN connection on the pool's database, closed with the server). */
  live?: LiveFeed;
  /** Serve HTTPS (and wss) with this certificate chain and key (PEM) instead of plain HTTP. */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

export interface ApiServer {
  /** http(s)://host:port/graphql */
  url: string;
  /** ws(s)://host:port/graphql */
  wsUrl: string;
  /** http(s)://host:port: the BOS v2 REST door is under `${base}/apis/bos/v2` and `${base}/v2`. */
  baseUrl: string;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const schema = buildSchema();
  const rules = limitRules({ ...DEFAULT_LIMITS, ...opts.limits });
  const live = opts.live ?? new LiveFeed({ pool: opts.pool, logger: opts.logger });
  const deps: ApiDeps = { pool: opts.pool, db: opts.db, kicker: opts.kicker, logger: opts.logger, images: opts.images, adapters: opts.adapters, reports: opts.reports, queueHealthy: opts.queueHealthy, now: opts.now, live };
  const identify = opts.identify ?? (opts.auth ? authIdentify(opts.auth) : identifyFromHeaders);
  const contextFor = async (req: http.IncomingMessage): Promise<ApiContext> =>
    createContext({ ...deps, logger: requestLogger(deps.logger, req) }, await identify(req), opts.contextExtras ? await opts.contextExtras(req) : {});

  const app = express();
  app.disable('x-powered-by');
  app.use(requestIds());
  const httpServer = (opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, app) : http.createServer(app)) as http.Server;
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql' });
  const ws = useServer<Record<string, unknown>, { request: http.IncomingMessage }>({
    schema,
    context: (ctx) => contextFor(withConnectionParams(ctx.extra.request, ctx.connectionParams)) as never,
    validate: ((s, doc) => graphqlRuntime.validate(s, doc, [...graphqlRuntime.specifiedRules, ...rules])) as typeof graphqlRuntime.validate,
  }, wsServer);

  const apollo = new ApolloServer<ApiContext>({
    schema,
    validationRules: rules,
    includeStacktraceInErrorResponses: false,
    formatError: (formatted, error) => maskInternal(withVariableField(formatted), error, opts.logger),
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      { async serverWillStart() { return { async drainServer() { await ws.dispose(); } }; } },
      metricsPlugin<ApiContext>(),
      unavailableStatusPlugin<ApiContext>(),
    ],
  });
  await apollo.start();

  app.get('/healthz', async (_req, res) => {
    const h = await health(deps);
    res.json({ apiStatus: h.api, dbStatus: h.database, queueStatus: h.queue });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
  });
  const maxBodyBytes = opts.maxBodyBytes ?? 16 * 1024 * 1024;
  app.use('/graphql', express.json({ limit: maxBodyBytes }),
    expressMiddleware(apollo, { context: async ({ req }) => contextFor(req) }));
  // Before the REST door: it answers `/` for BOS clients, the console answers it for browsers.
  app.use(consoleRouter({ authenticator: opts.auth?.authenticator }));
  const bos = bosRestRouter({ schema, contextFor, logger: opts.logger, maxBodyBytes });
  app.use('/apis/bos', bos);
  app.use(bos);
  app.use((err: Error & { status?: number; type?: string }, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) return next(err);
    const status = err.status ?? 500;
    res.status(status).json({ errors: [{ message: status === 413 ? 'request body too large' : err.message, extensions: { code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST' } }] });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(opts.port, opts.host, () => { httpServer.off('error', reject); resolve(); });
  });
  const { port } = httpServer.address() as AddressInfo;
  const host = ['0.0.0.0', '::', ''].includes(opts.host) ? '127.0.0.1' : opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  opts.logger?.info({ port }, 'api listening');
  const scheme = opts.tls ? 'https' : 'http';
  return {
    url: `${scheme}://${host}:${port}/graphql`,
    wsUrl: `${opts.tls ? 'wss' : 'ws'}://${host}:${port}/graphql`,
    baseUrl: `${scheme}://${host}:${port}`,
    close: async () => {
      await apollo.stop();
      if (!opts.live) await live.close();
    },
  };
}

/** Errors we did not mean to show (SQL, bugs) become a bare INTERNAL_SERVER_ERROR; the detail goes to the log. */
function maskInternal(formatted: GraphQLFormattedError, error: unknown, logger?: Logger): GraphQLFormattedError {
  if (formatted.extensions?.code !== 'INTERNAL_SERVER_ERROR') return formatted;
  if (isDatabaseUnavailable(unwrapResolverError(error))) {
    return { message: UNAVAILABLE_MESSAGE, path: formatted.path, locations: formatted.locations, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  }
  logger?.error({ err: unwrapResolverError(error), path: formatted.path }, 'internal error in a resolver');
  return { message: 'internal server error', path: formatted.path, locations: formatted.locations, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
