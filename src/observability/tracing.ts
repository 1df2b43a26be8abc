/**
 * OpenTelemetry traces, off unless an exporter endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTLP over HTTP with JSON bodies, which the OpenTelemetry Collector accepts). Off, the
 * OpenTelemetry API's no-op tracer makes `inSpan` cost a function call.
 *
 * Spans: an operator tick (`tick session-setup` is a session's setup), an action batch inside it, each
 * outside call inside that (`pcs transition`), each API request (a server span, inRequestSpan) and a
 * node report's path in it (`report`). Context flows by AsyncLocalStorage, so the call's span is the
 * batch's child, the batch the tick's: one trace from the job to the call.
 */
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { createRequire } from 'node:module';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

// The SDK (provider, processors, the OTLP exporter: half a megabyte of code) is loaded only when tracing
// is turned on, by require at that moment; the build leaves these packages to node_modules
// (scripts/build.mjs), so a process without tracing neither parses nor runs them at start.
const requireSdk = createRequire(import.meta.url);
const sdk = () => ({
  ...(requireSdk('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node')),
  ...(requireSdk('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base')),
  ...(requireSdk('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')),
  ...(requireSdk('@opentelemetry/resources') as typeof import('@opentelemetry/resources')),
});

const tracer = () => trace.getTracer('bootorch');

export interface Tracing {
  shutdown(): Promise<void>;
}

let registered: Tracing | undefined;

/**
 * Register a tracer provider for this process when an endpoint is configured (or an exporter is
 * given, for tests). Returns undefined when tracing stays off, or is already on in this process.
 */
export function startTracing(role: string, o: { env?: NodeJS.ProcessEnv; exporter?: SpanExporter } = {}): Tracing | undefined {
  const env = o.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if ((!o.exporter && !endpoint) || registered) return undefined;
  const {
    AlwaysOnSampler,
    BatchSpanProcessor,
    NodeTracerProvider,
    OTLPTraceExporter,
    ParentBasedSampler,
    SimpleSpanProcessor,
    resourceFromAttributes,
  } = sdk();
  // OTLP/HTTP: the traces endpoint as given, or the base endpoint's /v1/traces (the specification's
  // rule). The exporter reads the other OTEL_EXPORTER_OTLP_* variables (headers, timeout) itself.
  const exporter =
    o.exporter ??
    new OTLPTraceExporter({
      url: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${endpoint!.replace(/\/+$/, '')}/v1/traces`,
    });
  const processor: SpanProcessor = o.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'bootorch', 'bootorch.role': role }),
    spanProcessors: [processor],
    // A caller's traceparent gives the trace id, not the decision to record: a client that sends the
    // flag unsampled (-00) does not turn off the traces of its request and of the session it starts.
    // A site's OTEL_TRACES_SAMPLER, when set, decides instead (the SDK reads it).
    ...(env.OTEL_TRACES_SAMPLER
      ? {}
      : { sampler: new ParentBasedSampler({ root: new AlwaysOnSampler(), remoteParentNotSampled: new AlwaysOnSampler() }) }),
  });
  provider.register();
  registered = { shutdown: () => provider.shutdown() };
  return registered;
}

/** Send the spans still buffered (before the process exits); a no-op when tracing is off. */
export async function flushTracing(): Promise<void> {
  await registered?.shutdown().catch(() => {});
  registered = undefined;
}

/**
 * Run `fn` inside a span (a child of the current one); an exception marks the span as an error and
 * propagates. Attributes are counts and closed names, never a node list.
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
  links: Link[] = [],
): Promise<T> {
  return tracer().startActiveSpan(name, { kind, attributes, links }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  });
}

export { SpanKind };

/**
 * The active span as a W3C traceparent (to store with work that another process picks up), or
 * undefined when none. The propagator is the one the tracer provider registers (W3C trace context);
 * with tracing off it is a no-op and this is undefined.
 */
export function currentTraceparent(): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

function contextOf(traceparent: string): Context | undefined {
  const ctx = propagation.extract(context.active(), { traceparent });
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/**
 * Run `fn` in a span that joins the traces of the work it does: with one traceparent (one session's
 * work), the span is that trace's child, linked to the span it runs in (the tick, the job batch);
 * with several, it stays where it runs and links each of them. No traceparent: inSpan.
 */
export async function inSpanOf<T>(
  traceparents: ReadonlyArray<string | null | undefined>,
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const distinct = [...new Set(traceparents.filter((t): t is string => !!t))];
  const parents = distinct.map(contextOf).filter((c): c is Context => c !== undefined);
  const here = trace.getActiveSpan()?.spanContext();
  if (parents.length === 1) {
    return context.with(parents[0]!, () => inSpan(name, attributes, fn, SpanKind.INTERNAL, here ? [{ context: here }] : []));
  }
  return inSpan(
    name,
    attributes,
    fn,
    SpanKind.INTERNAL,
    parents.map((c) => ({ context: trace.getSpanContext(c)! })),
  );
}

interface HttpRequest {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}
interface HttpResponse {
  statusCode: number;
  once(e: 'close', f: () => void): unknown;
}

/**
 * Run `fn` (the handling of one API request) in a server span named `name`, ended when the answer is
 * closed. The span is a child of the caller's W3C `traceparent` when it sends one, so the caller's
 * trace id is the request's with tracing on, as it is for its log lines with tracing off (logging.ts
 * requestTraceId). Tracing off: just `fn`.
 */
export function inRequestSpan<T>(req: HttpRequest, res: HttpResponse, name: string, fn: () => T, attributes: Attributes = {}): T {
  if (!registered) return fn();
  const parent = propagation.extract(context.active(), req.headers);
  const path = (req.url ?? '').split('?')[0]!;
  return tracer().startActiveSpan(
    name,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method ?? '', 'url.path': path, ...attributes } },
    parent,
    (span) => {
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      return fn();
    },
  );
}

/**
 * Express middleware: every API request in a server span (GraphQL's plugin names it after its
 * operation), so the work a mutation starts joins the request's trace. Off when tracing is off.
 */
export function requestSpans() {
  return (req: HttpRequest, res: HttpResponse, next: () => void) => inRequestSpan(req, res, `HTTP ${req.method}`, next);
}

/** Name the request's span after the GraphQL operation it carries (and record who asked). */
export function nameRequestSpan(name: string, attributes: Attributes): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(name);
  span.setAttributes(attributes);
}
