/**
 * Logs: pino everywhere, one JSON object per line, made readable (pino-pretty) only when a person is
 * watching: the `dev` role (`npm start`) with stdout on a terminal. Log lines are decisions (a session
 * set up, an action batch, a tick that failed) with counts and session names, never one per node at
 * info level. API requests carry a request id (the caller's `x-request-id` when it is sane, else a new
 * one), echoed in the response header and bound to every log line the request writes, and a trace id
 * (traceIds below).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { isSpanContextValid, isValidTraceId, trace } from '@opentelemetry/api';

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
type RequestLogger = Logger & { [REQUEST]?: IncomingMessage };

/**
 * The trace id a line carries. Written inside a span: the span's trace and span ids (OpenTelemetry's
 * active context, set by inSpan and the request spans), so a line leads to its trace and a trace to
 * its lines. Else, by a request's logger (requestLogger): the request's trace id (requestTraceId),
 * so the lines of one request share one id with tracing off too. Else none. Worked out only for a
 * line that is written: a level that is off costs nothing here.
 */
function traceIds(_line: object, _level: number, logger: Logger): Record<string, string> {
  const ctx = trace.getActiveSpan()?.spanContext();
  if (ctx && isSpanContextValid(ctx)) return { traceId: ctx.traceId, spanId: ctx.spanId };
  const req = (logger as RequestLogger)[REQUEST];
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
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

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

/** The logger for one request: its lines carry `reqId` and the request's trace id (traceIds). */
export function requestLogger(log: Logger | undefined, req: IncomingMessage): Logger | undefined {
  if (!log) return undefined;
  const child: RequestLogger = log.child({ reqId: requestId(req) });
  child[REQUEST] = req;
  return child;
}
