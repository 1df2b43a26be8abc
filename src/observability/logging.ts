/**
 * Logs: pino everywhere, one JSON object per line, made readable (pino-pretty) only when a person is
 * watching: the `dev` role (`npm start`) with stdout on a terminal. Log lines are decisions (a session
 * set up, an action batch, a tick that failed) with counts and session names, never one per node at
 * info level. API requests carry a request id (the caller's `x-request-id` when it is sane, else a new
 * one), echoed in the response header and bound to every log line the request writes, and a trace id
 * (traceIds below). A session keeps the trace id of the request that created it, and the engine's
 * lines about it carry that id (traceLogger).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { isSpanContextValid, isValidSpanId, isValidTraceId, trace } from '@opentelemetry/api';

export interface LoggerOptions {
  level: string;
  role: string;
  /** Human-readable lines (default: only for the dev role on a TTY). */
  pretty?: boolean;
  /** Where the lines go (default stdout). */
  destination?: NodeJS.WritableStream;
}

/**
 * The request a request logger writes for, kept on the logger as a property of ours (a WeakMap entry
 * per request cost about as much CPU as making the child logger); its children inherit it.
 */
const REQUEST = Symbol('bootorch.request');
/** The trace id a trace logger's lines carry (traceLogger); its children inherit it. */
const TRACE = Symbol('bootorch.trace');
type BootorchLogger = Logger & { [REQUEST]?: IncomingMessage; [TRACE]?: string };

/**
 * The trace id a line carries. By a trace logger (traceLogger, the engine's lines about a session):
 * its trace id, with the active span's id when that span is in the same trace. Else, written inside
 * a span: the span's trace and span ids (OpenTelemetry's active context, set by inSpan and the request
 * spans), so a line leads to its trace and a trace to its lines. Else, by a request's logger
 * (requestLogger): the request's trace id (requestTraceId), so the lines of one request share one id
 * with tracing off too. Else none. Worked out only for a line that is written: a level that is off
 * costs nothing here.
 */
function traceIds(_line: object, _level: number, logger: Logger): Record<string, string> {
  const ctx = trace.getActiveSpan()?.spanContext();
  const active = ctx && isSpanContextValid(ctx) ? ctx : undefined;
  const bound = (logger as BootorchLogger)[TRACE];
  if (bound) return active?.traceId === bound ? { traceId: bound, spanId: active.spanId } : { traceId: bound };
  if (active) return { traceId: active.traceId, spanId: active.spanId };
  const req = (logger as BootorchLogger)[REQUEST];
  return req ? { traceId: requestTraceId(req) } : {};
}

export function createLogger(o: LoggerOptions): Logger {
  const base = { pid: process.pid, role: o.role };
  const readable = o.pretty ?? (o.role === 'dev' && process.stdout.isTTY === true);
  const options = { level: o.level, base, mixin: traceIds };
  if (!readable) return o.destination ? pino(options, o.destination) : pino(options);
  return pino(
    options,
    pretty({
      colorize: !o.destination,
      sync: true,
      singleLine: true,
      ignore: 'pid,hostname,role',
      translateTime: 'HH:MM:ss.l',
      destination: o.destination ?? 1,
    }),
  );
}

const ids = new WeakMap<IncomingMessage, string>();
const SANE_ID = /^[\w.:-]{1,64}$/;

/** The request's id: assigned by requestIds(), else the caller's header, else a new one (kept for the request). */
export function requestId(req: IncomingMessage): string {
  let id = ids.get(req);
  if (!id) {
    const given = req.headers['x-request-id'];
    id = typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID();
    ids.set(req, id);
  }
  return id;
}

/** Express/connect middleware: give each request its id and answer it in `x-request-id`. */
export function requestIds() {
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    res.setHeader('x-request-id', requestId(req));
    next();
  };
}

const traceIdOf = new WeakMap<IncomingMessage, string>();
/** A W3C traceparent: version, trace id, parent span id, flags. */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;

/**
 * The request's trace id for its log lines when no span is active (tracing off): the trace id of the
 * caller's W3C `traceparent` when it sends a valid one, else a new one (kept for the request). With
 * tracing on the request's span has the same rule (tracing.ts inRequestSpan: a child of the caller's
 * traceparent), and its lines carry the span's ids instead.
 */
export function requestTraceId(req: IncomingMessage): string {
  let id = traceIdOf.get(req);
  if (!id) {
    const given = TRACEPARENT.exec(String(req.headers.traceparent ?? ''))?.[1];
    id = given && isValidTraceId(given) ? given : randomUUID().replaceAll('-', '');
    traceIdOf.set(req, id);
  }
  return id;
}

/**
 * The trace of a request's lines (tracing off: requestTraceId), as a W3C traceparent to store with
 * the work the request leaves to the engine (a session): its parent is the caller's span when the
 * caller sent a traceparent, else a made-up one; marked sampled, so a worker that traces records the
 * session's spans in this trace. Given no request logger (an API without a logger), a trace of its
 * own. With tracing on, store the active span's (tracing.ts currentTraceparent) instead: the request's
 * lines carry that.
 */
export function requestTraceparent(log: Logger | undefined): string {
  const req = log && (log as BootorchLogger)[REQUEST];
  const traceId = req ? requestTraceId(req) : randomUUID().replaceAll('-', '');
  const caller = req ? TRACEPARENT.exec(String(req.headers.traceparent ?? '')) : null;
  const parent = caller?.[1] === traceId && isValidSpanId(caller[2]!) ? caller[2]! : randomBytes(8).toString('hex');
  return `00-${traceId}-${parent}-01`;
}

/** The logger for one request: its lines carry `reqId` and the request's trace id (traceIds). */
export function requestLogger(log: Logger | undefined, req: IncomingMessage): Logger | undefined {
  if (!log) return undefined;
  const child: BootorchLogger = log.child({ reqId: requestId(req) });
  child[REQUEST] = req;
  return child;
}

/**
 * A logger whose lines carry the trace id of `traceparent` (a session's stored trace context), with
 * tracing on or off: the engine's lines about one session carry the trace id of the request that
 * created it. No valid traceparent (a session stored without one): `log` itself.
 */
export function traceLogger(log: Logger, traceparent: string | null | undefined): Logger {
  const id = traceparent ? TRACEPARENT.exec(traceparent)?.[1] : undefined;
  if (!id || !isValidTraceId(id)) return log;
  const child: BootorchLogger = log.child({});
  child[TRACE] = id;
  return child;
}
