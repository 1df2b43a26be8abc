/**
 * Node reports without Apollo's per-request pipeline. Thousands of nodes send the same document
 * (src/reporter/agent.ts's REPORT_MUTATION) with different variables; Apollo would hash it, look up
 * its parse, run a dozen plugin hooks and build its response head for each. Here a document is
 * prepared once per query text: parsed, validated against the schema and checked against the
 * authenticated budget (limits.ts), and eligible only when it is a single mutation whose one root
 * field is `reportBootState`. An eligible request is executed directly with graphql-js on the same
 * schema (so the same authorization wrapper, resolver and report batcher run), and answered in
 * Apollo's shapes: the same error formatting and masking, the status an error's `extensions.http`
 * asks for, 503 when the database is down, and the same operation metrics.
 *
 * Everything else falls through to Apollo untouched: other documents, anonymous callers, persisted
 * queries, batches, and variables that do not fit (nothing executed yet: Apollo answers the 400).
 * The edge (edge.ts) has already authenticated the caller and taken the rate limit.
 */
import type http from 'node:http';
import type express from 'express';
import type {
  DocumentNode,
  GraphQLError as GraphQLErrorType,
  GraphQLFormattedError,
  GraphQLSchema,
  OperationDefinitionNode,
} from 'graphql';
import { checkDocument, type QueryLimits } from './limits.ts';
import { gql } from './edge-support.ts';
import { countOperation } from './metrics.ts';
import type { ApiContext, Identity } from './context.ts';

interface Prepared {
  document: DocumentNode;
  operation: OperationDefinitionNode;
}

export interface FastReportsOptions {
  schema: GraphQLSchema;
  /** The authenticated budget (the fast path serves authenticated callers only). */
  limits: QueryLimits;
  identityOf(req: http.IncomingMessage): { identity: Identity; authenticated: boolean } | undefined;
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
    return { document: c.document, operation: op! };
  }
}

/** The express middleware, placed after the edge's admit and body parsing, before its document check. */
export function fastReports(o: FastReportsOptions): express.RequestHandler {
  const cache = new PreparedCache(o.schema, o.limits);
  return (req, res, next) => {
    const body = req.method === 'POST' ? (req.body as Record<string, unknown> | undefined) : undefined;
    const admitted = o.identityOf(req);
    if (
      !body ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      typeof body.query !== 'string' ||
      body.extensions !== undefined ||
      !admitted?.authenticated
    )
      return next();
    const prepared = cache.get(body.query);
    if (!prepared) return next();
    const name = typeof body.operationName === 'string' ? body.operationName : undefined;
    if (name !== undefined && name !== prepared.operation.name?.value) return next();
    const variables =
      body.variables === undefined || body.variables === null
        ? {}
        : typeof body.variables === 'object' && !Array.isArray(body.variables)
          ? (body.variables as Record<string, unknown>)
          : undefined;
    if (!variables) return next();
    const coerced = gql.getVariableValues(o.schema, prepared.operation.variableDefinitions ?? [], variables);
    if ('errors' in coerced && coerced.errors) return next(); // nothing ran: Apollo says what does not fit
    void execute(o, req, res, prepared, variables).catch(next);
  };
}

async function execute(
  o: FastReportsOptions,
  req: express.Request,
  res: express.Response,
  p: Prepared,
  variables: Record<string, unknown>,
): Promise<void> {
  const start = process.hrtime.bigint();
  const contextValue = await o.contextFor(req, o.identityOf(req)!.identity);
  const result = await gql.execute({ schema: o.schema, document: p.document, contextValue, variableValues: variables });
  let status = 200;
  // As Apollo's normalizeAndFormatErrors: a default code, and `extensions.http` sets the answer's head.
  const errors = result.errors?.length
    ? result.errors.map((e: GraphQLErrorType) => {
        const { http: h, ...extensions } = e.extensions as { http?: { status?: number; headers?: Map<string, string> }; code?: unknown };
        if (h?.status) status = h.status;
        for (const [k, v] of h?.headers ?? []) res.setHeader(k, v);
        return o.formatError({ ...e.toJSON(), extensions: { ...extensions, code: extensions.code ?? 'INTERNAL_SERVER_ERROR' } }, e);
      })
    : undefined;
  // unavailable.ts's rule: the database down and no field answered is a 503 clients retry.
  const anyData = result.data && Object.values(result.data).some((v) => v !== null);
  if (errors?.some((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE') && !anyData) {
    status = 503;
    res.setHeader('retry-after', '5');
  }
  const field = (p.operation.selectionSet.selections[0] as { name: { value: string } }).name.value;
  countOperation('mutation', field, errors ? 'error' : 'ok', start);
  fastReportCounts.served++;
  res
    .status(status)
    .type('application/json; charset=utf-8')
    .send(`${JSON.stringify(errors ? { errors, data: result.data } : { data: result.data })}\n`);
}
