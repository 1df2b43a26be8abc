/**
 * Node reports without Apollo's per-request pipeline. Thousands of nodes send the same document
 * (src/reporter/agent.ts's REPORT_MUTATION) with different variables; Apollo would hash it, look up
 * its parse, run a dozen plugin hooks and build its response head for each. Here a document is
 * prepared once per query text: parsed, validated against the schema and checked against the
 * authenticated budget (limits.ts), and eligible only when it is a single mutation whose one root
 * field is `reportBootState`. An eligible request is executed by the document's compiled query
 * (graphql-jit, compiled once with it) on the same schema (so the same authorization wrapper, resolver
 * and report batcher run, and write the same log lines), and answered in Apollo's shapes: the same
 * error formatting and masking, the status an error's `extensions.http` asks for, 503 when the
 * database is down, the same operation metrics, and the request's span named as Apollo's plugin names
 * it (tracing.ts inRequestSpan).
 *
 * It runs before express (server.ts's request listener), so express's router, its request and
 * response wrappers and body parser, and its ETag are not paid per report; the edge's steps 1-2
 * (edge.ts: who, rate limit) run here, once. Everything else falls through to express and Apollo
 * untouched: other documents, anonymous callers, persisted queries, batches, and variables that do not
 * fit (nothing executed yet: Apollo answers the 400).
 */
import type http from 'node:http';
import bodyParser from 'body-parser';
import type { Logger } from 'pino';
import type { GraphQLError as GraphQLErrorType, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { checkDocument, type QueryLimits } from './limits.ts';
import { gql } from './edge-support.ts';
import { jsonTooDeep, parseRead, tooDeep } from './input-bounds.ts';
import { countOperation } from './metrics.ts';
import type { ApiContext, Identity } from './context.ts';
import type { Edge } from './edge.ts';
import { requestId } from '../observability/logging.ts';
import { inRequestSpan } from '../observability/tracing.ts';
import type { Attributes } from '@opentelemetry/api';
import { RETRY_AFTER_SECONDS, UNAVAILABLE } from './unavailable.ts';

interface Prepared {
  operation: OperationDefinitionNode;
  /** Its one root field. */
  field: string;
  /** The request span's name and attributes (tracing.ts inRequestSpan), as Apollo's plugin gives them. */
  span: { name: string; attributes: Attributes };
  /** The document compiled once (graphql-jit): variables coerced and the selection walked by generated code. */
  compiled: CompiledQuery;
}

export interface FastReportsOptions {
  schema: GraphQLSchema;
  /** The authenticated budget (the fast path serves authenticated callers only). */
  limits: QueryLimits;
  /** Who is calling and the rate limit (steps 1-2), and where a body read here is left for express. */
  edge: Pick<Edge, 'admitOnce' | 'bodyRead'>;
  /** Express: every request the fast path does not answer itself. */
  fallback(req: http.IncomingMessage, res: http.ServerResponse): void;
  logger?: Logger;
  contextFor(req: http.IncomingMessage, who: Identity): Promise<ApiContext>;
  /** Apollo's formatError (server.ts): field names of input errors, masking of internal errors. */
  formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError;
}

/** Requests this process answered by the fast path (tests check that it was taken). */
export const fastReportCounts = { served: 0 };

/** Root fields served here. */
const FAST_FIELDS = new Set(['reportBootState']);

/** Prepared documents by query text (null: not eligible); bounded, oldest dropped first. */
class PreparedCache {
  private readonly entries = new Map<string, Prepared | null>();
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly limits: QueryLimits,
    private readonly max = 100,
  ) {}

  get(query: string): Prepared | null {
    let p = this.entries.get(query);
    if (p === undefined) {
      p = this.prepare(query);
      this.entries.set(query, p);
      if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    }
    return p;
  }

  private prepare(query: string): Prepared | null {
    const c = checkDocument(this.schema, query, this.limits);
    if (!c.ok || gql.validate(this.schema, c.document).length) return null;
    const ops = c.document.definitions.filter((d): d is OperationDefinitionNode => d.kind === gql.Kind.OPERATION_DEFINITION);
    const op = ops[0];
    if (ops.length !== 1 || op!.operation !== 'mutation' || op!.directives?.length) return null;
    const fields = op!.selectionSet.selections;
    if (
      fields.length !== 1 ||
      fields[0]!.kind !== gql.Kind.FIELD ||
      !FAST_FIELDS.has(fields[0]!.name.value) ||
      fields[0]!.directives?.length
    )
      return null;
    const compiled = compileQuery(this.schema, c.document);
    if (!isCompiledQuery(compiled)) return null;
    const field = fields[0]!.name.value;
    const attributes = { 'graphql.operation.type': 'mutation', 'graphql.operation.name': op!.name?.value ?? '', 'bootorch.field': field };
    return { operation: op!, field, span: { name: `graphql mutation ${field}`, attributes }, compiled };
  }
}

/** Largest body the fast path reads itself (a report is a few hundred bytes); larger ones go to express. */
const MAX_FAST_BODY = 64 * 1024;

/**
 * The fast path's entry, called by the HTTP server before express: `take` returns false, having
 * touched nothing, for anything that is not a POST of JSON to /graphql with a credential and a
 * length; otherwise it owns the request. It admits it through the edge (who, rate limit), reads the
 * body, and answers an eligible document itself; anything else (a refusal, an anonymous caller, a
 * document it does not serve) goes to express with the admission and the body it already has
 * (edge.ts: admitOnce, bodyRead), so express answers as it always does and nothing happens twice.
 */
export function fastReports(o: FastReportsOptions): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const cache = new PreparedCache(o.schema, o.limits);
  return (req, res) => {
    const h = req.headers;
    const length = Number(h['content-length']);
    if (
      req.method !== 'POST' ||
      req.url !== '/graphql' ||
      !h.authorization ||
      !(length <= MAX_FAST_BODY) ||
      h['transfer-encoding'] !== undefined ||
      (h['content-encoding'] !== undefined && h['content-encoding'] !== 'identity') ||
      !isJson(h['content-type'])
    )
      return false;
    void serve(o, cache, req, res, length).catch((e) => fail(o, req, res, e));
    return true;
  };
}

/** application/json, utf-8 (or no charset): what the express body parser would take without converting. */
function isJson(type: string | undefined): boolean {
  if (!type) return false;
  const [media, ...params] = type.toLowerCase().split(';');
  if (media!.trim() !== 'application/json') return false;
  return params.every((p) => !p.trim().startsWith('charset=') || /^charset="?utf-8"?$/.test(p.trim()));
}

async function serve(o: FastReportsOptions, cache: PreparedCache, req: http.IncomingMessage, res: http.ServerResponse, length: number) {
  const a = await o.edge.admitOnce(req);
  // Refused, or anonymous (a smaller body budget): express answers, reading the body itself.
  if (!a.ok || !a.admitted.authenticated) return o.fallback(req, res);
  const raw = await readBody(req, length);
  // Too deep: express answers the bound's 400 (input-bounds.ts), as for any other body.
  if (jsonTooDeep(raw)) {
    o.edge.bodyRead(req, { error: tooDeep() });
    return o.fallback(req, res);
  }
  const body = jsonObject(raw) ?? (await parseRead(jsonParser, req, raw));
  if ('error' in body) {
    o.edge.bodyRead(req, body);
    return o.fallback(req, res);
  }
  o.edge.bodyRead(req, body);
  const run = eligible(cache, o.schema, body.body);
  if (!run) return o.fallback(req, res);
  // In the request's span (as express's requestSpans and Apollo's plugin make and name it), so the
  // report's span and log line carry the request's trace.
  const { span } = run.prepared;
  await inRequestSpan(req, res, span.name, () => execute(o, req, res, run.prepared, run.variables, a.admitted.identity), span.attributes);
}

/** A JSON object, or undefined for anything else (which body-parser words: jsonObject then defers to it). */
function jsonObject(raw: Buffer): { body: unknown } | undefined {
  try {
    const body: unknown = JSON.parse(raw.toString('utf8'));
    return body && typeof body === 'object' && !Array.isArray(body) ? { body } : undefined;
  } catch {
    return undefined;
  }
}

const jsonParser = bodyParser.json({ limit: MAX_FAST_BODY });

/** The body, exactly `length` bytes (the request's content-length). */
function readBody(req: http.IncomingMessage, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    req.on('data', (c: Buffer) => {
      got += c.length;
      if (got <= length) chunks.push(c);
    });
    req.once('end', () =>
      got === length
        ? resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
        : reject(Object.assign(new Error('request size did not match content length'), { status: 400 })),
    );
    req.once('error', reject);
  });
}

/** The prepared document and variables when this body is one the fast path serves. */
function eligible(
  cache: PreparedCache,
  schema: GraphQLSchema,
  body: unknown,
): { prepared: Prepared; variables: Record<string, unknown> } | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.query !== 'string' || b.extensions !== undefined) return undefined;
  const prepared = cache.get(b.query);
  if (!prepared) return undefined;
  const name = typeof b.operationName === 'string' ? b.operationName : undefined;
  if (name !== undefined && name !== prepared.operation.name?.value) return undefined;
  const variables =
    b.variables === undefined || b.variables === null
      ? {}
      : typeof b.variables === 'object' && !Array.isArray(b.variables)
        ? (b.variables as Record<string, unknown>)
        : undefined;
  if (!variables) return undefined;
  const coerced = gql.getVariableValues(schema, prepared.operation.variableDefinitions ?? [], variables);
  if ('errors' in coerced && coerced.errors) return undefined; // nothing ran: Apollo says what does not fit
  return { prepared, variables };
}

async function execute(
  o: FastReportsOptions,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  p: Prepared,
  variables: Record<string, unknown>,
  identity: Identity,
): Promise<void> {
  const start = process.hrtime.bigint();
  const contextValue = await o.contextFor(req, identity);
  const result = await p.compiled.query(undefined, contextValue, variables);
  let status = 200;
  // As Apollo's normalizeAndFormatErrors: a default code, and `extensions.http` sets the answer's head.
  const errors = result.errors?.length
    ? result.errors.map((e: GraphQLErrorType) => {
        const { http: h, ...extensions } = (e.extensions ?? {}) as {
          http?: { status?: number; headers?: Map<string, string> };
          code?: unknown;
        };
        if (h?.status) status = h.status;
        for (const [k, v] of h?.headers ?? []) res.setHeader(k, v);
        return o.formatError({ ...e.toJSON(), extensions: { ...extensions, code: extensions.code ?? 'INTERNAL_SERVER_ERROR' } }, e);
      })
    : undefined;
  // unavailable.ts's rule: the database down and no field answered is a 503 clients retry.
  const anyData = result.data && Object.values(result.data).some((v) => v !== null);
  const down = errors?.find((e) => e.extensions?.code === UNAVAILABLE);
  if (down && !anyData) {
    status = 503;
    res.setHeader('retry-after', String(down.extensions?.retryAfter ?? RETRY_AFTER_SECONDS));
  }
  countOperation('mutation', p.field, errors ? 'error' : 'ok', start);
  fastReportCounts.served++;
  send(res, status, `${JSON.stringify(errors ? { errors, data: result.data } : { data: result.data })}\n`, requestId(req));
}

/** One write: head and body together (end with the whole body, its length known). */
function send(res: http.ServerResponse, status: number, body: string, id: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': id,
  });
  res.end(body);
}

/** What the edge's error handler (server.ts) answers for an error it did not expect. */
function fail(o: FastReportsOptions, req: http.IncomingMessage, res: http.ServerResponse, e: unknown): void {
  const status = (e as { status?: number }).status ?? 500;
  if (status >= 500) o.logger?.error({ err: e }, 'internal error at the edge');
  if (res.headersSent) return void res.destroy();
  const message = status >= 500 ? 'internal server error' : (e as Error).message;
  const code = status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
  send(res, status, JSON.stringify({ errors: [{ message, extensions: { code } }] }), requestId(req));
}
