/**
 * The API process: Apollo Server 5 over express 5, with graphql-ws on the same port and path
 * (/graphql), plus GET /healthz (BOS's healthz, always 200), GET /metrics (prom-client) and the BOS v2
 * REST door (src/rest: /apis/bos/v2/..., /v2/... and /), and the web console (src/api/console.ts: `/` for
 * browsers, /assets, /console/dev-token). Plain HTTP, or HTTPS when given a certificate.
 *
 * Every request's declared body size is checked first, at the listener, on every route
 * (input-bounds.ts). Every /graphql request, graphql-ws operation and REST request then passes the
 * edge (edge.ts: authentication, the rate limit, the body and, for GraphQL, the document's budget);
 * routes that need no credential take from a per-address bucket of their own (edge.ts limitOpen).
 *
 * What answers without a credential (docs/security.md): /healthz (three states, cached for a
 * second), the public fields `version` and `health` over HTTP within the smallest budget (and BOS's
 * version documents), and nothing else: no introspection, no field suggestions, no /metrics (a
 * credential of role viewer or above, or the separate `metricsListen` address), no graphql-ws connection.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import compression from 'compression';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import type { GraphQLError as GraphQLErrorType, GraphQLFormattedError } from 'graphql';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { unwrapResolverError } from '@apollo/server/errors';
import { expressMiddleware } from '@as-integrations/express5';
import { poolOf } from '../db/client.ts';
import { buildSchema } from './schema.ts';
import { createContext, identifyFromHeaders, type ApiContext, type ApiDeps, type Identify, type Identity } from './context.ts';
import { LiveFeed } from './live/feed.ts';
import { Multiplexer, type MultiplexerOptions } from './live/multiplexer.ts';
import { useLiveServer } from './live/ws-server.ts';
import { exposeLiveMetrics } from './live/live-metrics.ts';
import { graphqlRuntime } from './live/graphql-runtime.ts';
import { checkWsInternals } from './live/ws-internals.ts';
import { authIdentify, type ApiAuth } from './auth.ts';
import { isDatabaseUnavailable, unavailableFormatted, unavailableStatusPlugin } from './unavailable.ts';
import { withVariableField } from './input-errors.ts';
import { ANONYMOUS_LIMITS, atMost, DEFAULT_LIMITS, type QueryLimits } from './limits.ts';
import { metricsPlugin, metricsRegistry } from './metrics.ts';
import { health } from './resolvers/system.ts';
import { requestIds, requestLogger } from '../observability/logging.ts';
import { requestSpans } from '../observability/tracing.ts';
import type { BootRouter } from './boot/routes.ts';
import { Problem } from '../rest/problem.ts';
import { bosRestRouter } from '../rest/router.ts';
import { Edge, principalOf } from './edge.ts';
import { PersistedQueries } from './edge-support.ts';
import { wsEdge } from './edge-ws.ts';
import { fastReports } from './fast-reports.ts';
import { CredentialWatch } from './credential-watch.ts';
import { roleAtLeast } from '../auth/index.ts';
import type { NodeRegistry } from '../adapters/standalone/registry.ts';
import { consoleRouter } from './console.ts';
import { bodyGate, BoundedResponse, closeUnreadBodies } from './input-bounds.ts';

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
  /** The document budget of an authenticated caller (limits.ts DEFAULT_LIMITS: 2,000 tokens, depth 12, 30 aliases, cost 1,000,000, ...). */
  limits?: Partial<QueryLimits>;
  /** The budget without a valid credential (default ANONYMOUS_LIMITS); never more than `limits`. */
  anonymousLimits?: Partial<QueryLimits>;
  /** Largest accepted request body (default 16 MiB: a 10,000-component putComponents fits). */
  maxBodyBytes?: number;
  /** Largest body without a valid credential (default 256 KiB; the document budget refuses a long one cheaply anyway). */
  anonymousMaxBodyBytes?: number;
  /** Express's `trust proxy`: whose X-Forwarded-For names the client address (default: nobody's). */
  trustProxy?: boolean | number | string | string[];
  /** Also serve /metrics, without a credential, on this address (e.g. a management network). */
  metricsListen?: { port: number; host: string };
  /** Ends graphql-ws connections whose credential ends (default: one LISTEN connection on the pool's database). */
  credentialWatch?: CredentialWatch;
  /** Standalone mode's boot-script endpoint (api/boot/routes.ts), mounted at /boot/v1. */
  bootRoutes?: express.Router & Partial<Pick<BootRouter, 'door'>>;
  /** Serve HTTPS (and wss) with this certificate chain and key (PEM) instead of plain HTTP. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Multiplexed subscriptions: batch window, per-subscriber queue bound (src/api/live/multiplexer.ts). */
  liveOptions?: MultiplexerOptions;
  /** Offer permessage-deflate on the WebSocket (default false: docs/architecture.md, "Live updates"). */
  wsDeflate?: boolean;
}

export interface ApiServer {
  /** http(s)://host:port/graphql */
  url: string;
  /** ws(s)://host:port/graphql */
  wsUrl: string;
  /** http(s)://host:port: the BOS v2 REST door is under `${base}/apis/bos/v2` and `${base}/v2`. */
  baseUrl: string;
  /** http://host:port/metrics of `metricsListen`, when given. */
  metricsUrl?: string;
  /** The credential watch (connections it ended so far: `watch.ended`). */
  watch: CredentialWatch;
  /** The subscriptions' multiplexer (its stats: groups, executions, queues). */
  live: Multiplexer;
  close(): Promise<void>;
}

export async function startApiServer(opts: ApiServerOptions): Promise<ApiServer> {
  const api = await apiParts(opts);
  const app = express();
  app.disable('x-powered-by');
  closeUnreadBodies(app);
  app.use(requestIds());
  app.use(requestSpans());
  // Compressed answers (br at quality 4, or gzip) above 1 KiB for clients that ask: /graphql (the console's
  // machine-map snapshot), REST, /metrics, the console's files. Not /boot/v1 (iPXE asks for none; its
  // files are sent as they are, ranges and all), not event streams (buffered by the compressor);
  // graphql-ws upgrades never reach express.
  // Network boot requests do not enter it at all: it wraps every answer's write and end even when its
  // filter then says no, which cost 12.7 s of the API's CPU in a 10,000-node PXE storm (30,000 requests).
  const compress = compression({
    filter: (req, res) => !String(res.getHeader('content-type') ?? '').startsWith('text/event-stream') && compression.filter(req, res),
  });
  app.use((req, res, next) => (req.url.startsWith('/boot/v1/') ? next() : compress(req, res, next)));
  const httpServer = createHttpServer(opts, api, app);
  const live = mountGraphqlWs(httpServer, opts, api);
  const apollo = await startApollo(httpServer, api, live.ws);
  // Routes that need no credential and skip the edge: a generous bucket per client address (edge.ts limitOpen).
  const open = api.edge.limitOpen();
  mountHealth(app, api, open);
  mountMetrics(app, api);
  // Network boot (iPXE, the node's reporter) carries no credential: outside the edge, by design.
  if (opts.bootRoutes) app.use('/boot/v1', opts.bootRoutes);
  mountGraphql(app, api, apollo);
  // Before the REST door: it answers `/` for BOS clients, the console answers it for browsers.
  app.use(consoleRouter({ authenticator: opts.auth?.authenticator, limit: open }));
  mountRest(app, api, open);
  mountFallbacks(app, api, open);
  await listen(httpServer, opts.port, opts.host);
  const metrics = opts.metricsListen ? await startMetricsListener(opts.metricsListen, api, open) : undefined;

  const { port } = httpServer.address() as AddressInfo;
  const host = hostOf(opts.host);
  opts.logger?.info({ port }, 'api listening');
  const scheme = opts.tls ? 'https' : 'http';
  return {
    url: `${scheme}://${host}:${port}/graphql`,
    wsUrl: `${opts.tls ? 'wss' : 'ws'}://${host}:${port}/graphql`,
    baseUrl: `${scheme}://${host}:${port}`,
    metricsUrl: metrics?.url,
    watch: api.watch,
    live: live.mux,
    close: async () => {
      await apollo.stop();
      live.hideMetrics();
      if (metrics) await new Promise((r) => metrics.server.close(r));
      if (!opts.credentialWatch) await api.watch.close();
      if (!opts.live) await api.live.close();
    },
  };
}

/** What every mount works with: the schema, the edge, the request context and the bounds, made once per server. */
interface ApiParts {
  opts: ApiServerOptions;
  schema: ReturnType<typeof buildSchema>;
  limits: QueryLimits;
  deps: ApiDeps;
  live: LiveFeed;
  watch: CredentialWatch;
  identify: Identify;
  edge: Edge;
  persisted: PersistedQueries;
  maxBodyBytes: number;
  anonymousMaxBodyBytes: number;
  /** Every request's declared body size first, on every route (input-bounds.ts). */
  gate: ReturnType<typeof bodyGate>;
  contextFor(req: http.IncomingMessage, who: Identity): Promise<ApiContext>;
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

async function apiParts(opts: ApiServerOptions): Promise<ApiParts> {
  const schema = buildSchema();
  const limits: QueryLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const anonymousLimits = atMost({ ...ANONYMOUS_LIMITS, ...opts.anonymousLimits }, limits);
  // Without a feed of its own: one LISTEN connection on the pool's database, closed with the server.
  const live = opts.live ?? new LiveFeed({ pool: poolOf(opts.db), logger: opts.logger });
  const watch = opts.credentialWatch ?? new CredentialWatch({ pool: poolOf(opts.db), logger: opts.logger });
  const deps: ApiDeps = { ...opts, live };
  // Cached credentials only while the watch hears revocations (token-rows.ts); without it, every lookup is a query.
  const tokenRows = opts.auth?.authenticator.tokenRows;
  if (tokenRows)
    await watch
      .keepCache(tokenRows)
      .catch((e) => opts.logger?.warn({ err: (e as Error).message }, 'credential watch: LISTEN failed; token rows are not cached'));
  const identify = opts.identify ?? (opts.auth ? authIdentify(opts.auth) : identifyFromHeaders);
  const contextFor = async (req: http.IncomingMessage, who: Identity): Promise<ApiContext> =>
    createContext({ ...deps, logger: requestLogger(deps.logger, req) }, who, opts.contextExtras ? await opts.contextExtras(req) : {});
  const persisted = new PersistedQueries();
  const maxBodyBytes = opts.maxBodyBytes ?? 16 * 1024 * 1024;
  const anonymousMaxBodyBytes = opts.anonymousMaxBodyBytes ?? 256 * 1024;
  const edge = new Edge({
    schema,
    identify,
    limiter: opts.auth?.limiter,
    limits,
    anonymousLimits,
    maxBodyBytes,
    anonymousMaxBodyBytes,
    openLimiter: opts.auth?.openLimiter,
    persisted,
    trustProxy: opts.trustProxy,
    watch,
    logger: opts.logger,
  });
  return {
    opts,
    schema,
    limits,
    deps,
    live,
    watch,
    identify,
    edge,
    persisted,
    maxBodyBytes,
    anonymousMaxBodyBytes,
    gate: bodyGate({ max: maxBodyBytes, anonymousMax: anonymousMaxBodyBytes }),
    contextFor,
    formatError: (formatted, error) => maskInternal(withVariableField(formatted), error, opts.logger),
  };
}

/**
 * The HTTP(S) server: the body gate first, then the node reporter's document answered before express
 * (fast-reports.ts), then express. An Expect: 100-continue too large gets no 100.
 */
function createHttpServer(opts: ApiServerOptions, api: ApiParts, app: express.Express): http.Server {
  const { gate } = api;
  const fast = fastReports({
    schema: api.schema,
    limits: api.limits,
    edge: api.edge,
    fallback: app,
    contextFor: api.contextFor,
    formatError: api.formatError,
    logger: opts.logger,
  });
  const serve: http.RequestListener = (req, res) => void (fast(req, res) || app(req, res));
  // Network boot's door (api/boot/limits.ts) before anything else: its refusals cost next to nothing.
  const door = opts.bootRoutes?.door ?? (() => false);
  const listener: http.RequestListener = (req, res) => void (gate(req, res) || door(req, res) || serve(req, res));
  // Answers to bodies left unread close their connection (input-bounds.ts).
  const httpServer = (
    opts.tls
      ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ServerResponse: BoundedResponse }, listener)
      : http.createServer({ ServerResponse: BoundedResponse }, listener)
  ) as http.Server;
  httpServer.on('checkContinue', (req, res) => void (gate(req, res) || door(req, res) || (res.writeContinue(), serve(req, res))));
  return httpServer;
}

/** graphql-ws on the same port and path (/graphql): subscriptions through the multiplexer, every operation through the edge. */
function mountGraphqlWs(httpServer: http.Server, opts: ApiServerOptions, api: ApiParts) {
  const { edge, schema, watch, live, maxBodyBytes, contextFor } = api;
  // Shared payloads go out pre-compressed through ws internals (live/ws-internals.ts): refuse to start if they moved.
  if (opts.wsDeflate) checkWsInternals();
  const wsServer = new WebSocketServer({
    server: httpServer,
    path: '/graphql',
    maxPayload: maxBodyBytes,
    // The upgrade carries no credential (connection_init does): the per-address limit of open routes.
    verifyClient: (info, done) =>
      void edge.takeOpen(info.req).then(
        (r) => (r ? done(false, 429, 'Too Many Requests', { 'retry-after': String(r.retryAfterSeconds) }) : done(true)),
        () => done(false, 500),
      ),
    perMessageDeflate: opts.wsDeflate ? { serverNoContextTakeover: true, clientNoContextTakeover: true } : false,
  });
  const mux = new Multiplexer(opts.liveOptions);
  const hideLiveMetrics = exposeLiveMetrics(mux, live);
  const hooks = wsEdge(edge, { schema, limiter: opts.auth?.limiter, watch, contextFor: (who, req) => contextFor(req, who) });
  const ws = useLiveServer(
    {
      schema,
      onConnect: hooks.onConnect,
      onClose: hooks.onClose,
      // Returns the execution arguments itself (parsed and validated there), or the refusal.
      onSubscribe: hooks.onSubscribe,
      // The same error shapes as over HTTP: every error typed, internal ones masked.
      onNext: (_ctx, _id, _p, _args, result) =>
        result.errors?.length ? { ...result, errors: formatWsErrors(result.errors, result.data === undefined, opts.logger) } : undefined,
      onError: (_ctx, _id, _p, errors) => formatWsErrors(errors, false, opts.logger),
      validate: (s, doc) => graphqlRuntime.validate(s, doc),
    },
    wsServer,
    mux,
  );
  return { ws, mux, hideMetrics: hideLiveMetrics };
}

async function startApollo(
  httpServer: http.Server,
  api: ApiParts,
  ws: { dispose(): Promise<void> | void },
): Promise<ApolloServer<ApiContext>> {
  const { schema, limits, persisted, formatError } = api;
  const apollo = new ApolloServer<ApiContext>({
    schema,
    // The edge checked the document's size and budget before Apollo parses it; this is the backstop.
    parseOptions: { maxTokens: limits.maxTokens },
    persistedQueries: { cache: persisted },
    includeStacktraceInErrorResponses: false,
    formatError,
    plugins: [
      ApolloServerPluginDrainHttpServer({ httpServer }),
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await ws.dispose();
            },
          };
        },
      },
      metricsPlugin<ApiContext>(),
      unavailableStatusPlugin<ApiContext>(),
      noSuggestionsForAnonymous(),
    ],
  });
  await apollo.start();
  return apollo;
}

/**
 * Probes carry no credential: /healthz answers anyone, the three states only, at most one probe of
 * the database and queue per second however often it is asked.
 */
function mountHealth(app: express.Express, api: ApiParts, open: express.RequestHandler): void {
  const healthz = cachedHealth(() => health(api.deps), 1000);
  app.get('/healthz', open, async (_req, res) => {
    const h = await healthz();
    res.json({ apiStatus: h.api, dbStatus: h.database, queueStatus: h.queue });
  });
}

const sendMetrics = async (res: express.Response) => {
  res.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
};

/** GET /metrics for a credential of role viewer or above (without one: the separate `metricsListen` address). */
function mountMetrics(app: express.Express, api: ApiParts): void {
  const { edge } = api;
  app.get('/metrics', async (req, res, next) => {
    try {
      const a = await edge.authenticate(req);
      if (!a.ok)
        return void res
          .status(a.status)
          .set(a.headers)
          .json({ errors: [a.error] });
      const p = principalOf(a.identity);
      if (!p || !roleAtLeast(p.role, 'viewer')) {
        return void res
          .status(p ? 403 : 401)
          .set(p ? {} : { 'www-authenticate': 'Bearer realm="bootorch"' })
          .json({
            errors: [
              {
                message: p
                  ? `forbidden: /metrics needs role viewer or higher; caller is ${p.role}`
                  : 'not authenticated: /metrics needs a credential (Authorization: Bearer <token>) of role viewer or higher, or BOOTORCH_METRICS_PORT',
                extensions: { code: p ? 'FORBIDDEN' : 'UNAUTHENTICATED' },
              },
            ],
          });
      }
      await sendMetrics(res);
    } catch (e) {
      next(e);
    }
  });
}

/** /graphql over HTTP: the edge (who, rate limit, body, the document's budget), then Apollo. */
function mountGraphql(app: express.Express, api: ApiParts, apollo: ApolloServer<ApiContext>): void {
  const { edge, identify, contextFor } = api;
  app.use(
    '/graphql',
    ...edge.http(),
    expressMiddleware(apollo, { context: async ({ req }) => contextFor(req, edge.identityOf(req) ?? (await identify(req))) }),
  );
}

/** The BOS v2 REST door under /apis/bos and at the root; it admits each request through the same edge (who, rate limit) before its body is read. */
function mountRest(app: express.Express, api: ApiParts, open: express.RequestHandler): void {
  const { edge, contextFor, opts } = api;
  const restContext = async (req: http.IncomingMessage): Promise<ApiContext> => {
    const a = await edge.authenticate(req);
    if (!a.ok) throw new Problem(a.status, a.error.message, undefined, a.headers);
    return contextFor(req, a.identity);
  };
  const bos = bosRestRouter({
    schema: api.schema,
    contextFor: restContext,
    logger: opts.logger,
    maxBodyBytes: api.maxBodyBytes,
    anonymousMaxBodyBytes: api.anonymousMaxBodyBytes,
    limit: open,
  });
  app.use('/apis/bos', bos);
  app.use(bos);
}

/** After every route: 404 for the rest, and the edge's error answer (typed, internal ones masked). */
function mountFallbacks(app: express.Express, api: ApiParts, open: express.RequestHandler): void {
  const { opts } = api;
  app.use(open, (req, res) => {
    res.status(404).json({ errors: [{ message: `no route ${req.method} ${req.path}`, extensions: { code: 'NOT_FOUND' } }] });
  });
  app.use((err: Error & { status?: number; limit?: string }, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) return next(err);
    const status = err.status ?? 500;
    if (status >= 500) opts.logger?.error({ err }, 'internal error at the edge');
    // A bound's refusal (input-bounds.ts) names its limit; other 413s are body-parser's (a decompressed body).
    const named = typeof err.limit === 'string';
    res.status(status).json({
      errors: [
        {
          message: named ? err.message : status === 413 ? 'request body too large' : status >= 500 ? 'internal server error' : err.message,
          extensions: {
            code: status === 413 ? 'PAYLOAD_TOO_LARGE' : status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST',
            ...(named ? { limit: err.limit } : {}),
          },
        },
      ],
    });
  });
}

/**
 * Connections the kernel may hold for the API before it accepts them (node's default is 511; Linux
 * caps it at net.core.somaxconn): a PXE storm opens a thousand new connections a second, and past the
 * queue the kernel drops them (TcpExtListenOverflows), which the node sees as a reset or a timeout.
 */
const LISTEN_BACKLOG = 4096;

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** /metrics without a credential on its own address (e.g. a management network), behind the body gate and the open routes' bucket. */
async function startMetricsListener(
  at: { port: number; host: string },
  api: ApiParts,
  open: express.RequestHandler,
): Promise<{ server: http.Server; url: string }> {
  const { gate } = api;
  const m = express();
  m.disable('x-powered-by');
  closeUnreadBodies(m);
  m.get('/metrics', open, async (_req, res) => sendMetrics(res));
  const server = http.createServer({ ServerResponse: BoundedResponse }, (req, res) => void (gate(req, res) || m(req, res)));
  await listen(server, at.port, at.host);
  return { server, url: `http://${hostOf(at.host)}:${(server.address() as AddressInfo).port}/metrics` };
}

const hostOf = (h: string) => (['0.0.0.0', '::', ''].includes(h) ? '127.0.0.1' : h.includes(':') ? `[${h}]` : h);

/** One probe at a time, its answer reused for `ms`. */
function cachedHealth<T>(probe: () => Promise<T>, ms: number): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > ms) last = { at: now, value: probe() };
    return last.value;
  };
}

/** Validation and coercion errors say "Did you mean ...?" with names from the schema: not to anonymous callers. */
function noSuggestionsForAnonymous(): ApolloServerPlugin<ApiContext> {
  return {
    async requestDidStart({ contextValue }) {
      if (principalOf(contextValue)) return;
      const strip = (m: string) => m.replace(/ ?Did you mean(.+?)\?$/, '');
      return {
        async validationDidStart() {
          return async (errors) => {
            errors?.forEach((e) => {
              e.message = strip(e.message);
            });
          };
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const r = response.body.singleResult;
          if (r.errors) r.errors = r.errors.map((e) => ({ ...e, message: strip(e.message) }));
        },
      };
    },
  };
}

/**
 * graphql-ws errors as Apollo would format them: an error without a code is BAD_USER_INPUT when
 * nothing executed (variables that do not fit), else INTERNAL_SERVER_ERROR, masked like over HTTP.
 * An error with a path was thrown by a resolver (a subscription's, which leaves no data either):
 * never the input's fault.
 */
function formatWsErrors(errors: readonly GraphQLErrorType[], requestError: boolean, logger?: Logger): GraphQLFormattedError[] {
  return errors.map((e) => {
    const f = e.toJSON();
    const code = f.extensions?.code ?? (requestError && !e.path ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR');
    return maskInternal(withVariableField({ ...f, extensions: { ...f.extensions, code } }), e, logger);
  });
}

/** Errors we did not mean to show (SQL, bugs) become a bare INTERNAL_SERVER_ERROR; the detail goes to the log. */
function maskInternal(formatted: GraphQLFormattedError, error: unknown, logger?: Logger): GraphQLFormattedError {
  if (formatted.extensions?.code !== 'INTERNAL_SERVER_ERROR') return formatted;
  if (isDatabaseUnavailable(unwrapResolverError(error))) return unavailableFormatted(formatted, unwrapResolverError(error));
  logger?.error({ err: unwrapResolverError(error), path: formatted.path }, 'internal error in a resolver');
  return {
    message: 'internal server error',
    path: formatted.path,
    locations: formatted.locations,
    extensions: { code: 'INTERNAL_SERVER_ERROR' },
  };
}
