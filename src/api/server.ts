/**
 * The API process: Apollo Server 5 over express 5, with graphql-ws on the same port and path
 * (/graphql), plus GET /healthz (BOS's healthz, always 200) and GET /metrics (prom-client).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type pg from 'pg';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
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
import { Multiplexer, type MultiplexerOptions } from './live/multiplexer.ts';
import { useLiveServer } from './live/ws-server.ts';
import { exposeLiveMetrics } from './live/live-metrics.ts';
import { graphqlRuntime } from './live/graphql-runtime.ts';
import { authIdentify, type ApiAuth } from './auth.ts';
import { isDatabaseUnavailable, unavailableStatusPlugin, UNAVAILABLE_MESSAGE } from './unavailable.ts';
import { withVariableField } from './input-errors.ts';
import { DEFAULT_LIMITS, limitRules, type QueryLimits } from './limits.ts';
import { metricsPlugin, metricsRegistry } from './metrics.ts';
import { health } from './resolvers/system.ts';

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
  /** Multiplexed subscriptions: batch window, per-subscriber queue bound (src/api/live/multiplexer.ts). */
  liveOptions?: MultiplexerOptions;
  /** Offer permessage-deflate on the WebSocket (default false: see the README's Live section). */
  wsDeflate?: boolean;
}

export interface ApiServer {
  /** http://host:port/graphql */
  url: string;
  /** ws://host:port/graphql */
  wsUrl: string;
  /** The subscriptions' multiplexer (its stats: groups, executions, queues). */
  live: Multiplexer;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const schema = buildSchema();
  const rules = limitRules({ ...DEFAULT_LIMITS, ...opts.limits });
  const live = opts.live ?? new LiveFeed({ pool: opts.pool, logger: opts.logger });
  const deps: ApiDeps = { pool: opts.pool, db: opts.db, kicker: opts.kicker, logger: opts.logger, images: opts.images, adapters: opts.adapters, reports: opts.reports, queueHealthy: opts.queueHealthy, now: opts.now, live };
  const identify = opts.identify ?? (opts.auth ? authIdentify(opts.auth) : identifyFromHeaders);
  const contextFor = async (req: http.IncomingMessage): Promise<ApiContext> =>
    createContext(deps, await identify(req), opts.contextExtras ? await opts.contextExtras(req) : {});

  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql', perMessageDeflate: opts.wsDeflate
    ? { serverNoContextTakeover: true, clientNoContextTakeover: true } : false });
  const mux = new Multiplexer(opts.liveOptions);
  const hideLiveMetrics = exposeLiveMetrics(mux, live);
  const ws = useLiveServer({
    schema,
    context: (ctx) => contextFor(withConnectionParams(ctx.extra.request, ctx.connectionParams)) as never,
    validate: ((s, doc) => graphqlRuntime.validate(s, doc, [...graphqlRuntime.specifiedRules, ...rules])) as typeof graphqlRuntime.validate,
  }, wsServer, mux);

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
  app.use('/graphql', express.json({ limit: opts.maxBodyBytes ?? 16 * 1024 * 1024 }),
    expressMiddleware(apollo, { context: async ({ req }) => contextFor(req) }));
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
  return {
    url: `http://${host}:${port}/graphql`,
    wsUrl: `ws://${host}:${port}/graphql`,
    live: mux,
    close: async () => {
      await apollo.stop();
      hideLiveMetrics();
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
