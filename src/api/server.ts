/**
 * The API process: Apollo Server 5 over express 5, with graphql-ws on the same port and path
 * (/graphql), plus GET /healthz (BOS's healthz, always 200) and GET /metrics (prom-client).
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { GraphQLFormattedError } from 'graphql';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import { poolOf } from '../db/client.ts';
import { buildSchema } from './schema.ts';
import { createContext, identifyFromHeaders, withConnectionParams, type ApiContext, type ApiDeps, type Identify } from './context.ts';
import { LiveFeed } from './live/feed.ts';
import { authIdentify, type ApiAuth } from './auth.ts';
import { isDatabaseUnavailable, unavailableStatusPlugin, UNAVAILABLE_MESSAGE } from './unavailable.ts';
import { withVariableField } from './input-errors.ts';
import { DEFAULT_LIMITS, limitRules, type QueryLimits } from './limits.ts';
import { metricsPlugin, metricsRegistry } from './metrics.ts';
import { health } from './resolvers/system.ts';

/**
 * graphql's CommonJS build, the one Apollo, graphql-ws and graphql-tools load. Bundlers that prefer
 * its `module` build (vitest) would otherwise hand graphql-ws a validate() that rejects a schema made
 * by the other copy ("from another module or realm"). Under node/tsx both names are the same module.
 */
const graphqlRuntime = createRequire(import.meta.url)('graphql') as typeof import('graphql');

export interface ApiServerOptions extends ApiDeps {
  /** 0 picks a free port (see the returned url). */
  port: number;
  host: string;
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
}

export interface ApiServer {
  /** http://host:port/graphql */
  url: string;
  /** ws://host:port/graphql */
  wsUrl: string;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const schema = buildSchema();
  const rules = limitRules({ ...DEFAULT_LIMITS, ...opts.limits });
  // Without a feed of its own: one LISTEN connection on the pool's database, closed with the server.
  const live = opts.live ?? new LiveFeed({ pool: poolOf(opts.db), logger: opts.logger });
  const deps: ApiDeps = { ...opts, live };
  const identify = opts.identify ?? (opts.auth ? authIdentify(opts.auth) : identifyFromHeaders);
  const contextFor = async (req: http.IncomingMessage): Promise<ApiContext> =>
    createContext(deps, await identify(req), opts.contextExtras ? await opts.contextExtras(req) : {});

  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
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
