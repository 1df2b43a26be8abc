/**
 * Logs: pino everywhere, one JSON object per line, made readable (pino-pretty) only when a person is
 * watching: the `dev` role (`npm start`) with stdout on a terminal. Log lines are decisions (a session
 * set up, an action batch, a tick that failed) with counts and session names, never one per node at
 * info level. API requests carry a request id (the caller's `x-request-id` when it is sane, else a new
 * one), echoed in the response header and bound to every log line the request writes.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { isSpanContextValid, trace } from '@opentelemetry/api';

export interface LoggerOptions {
  level: string;
  role: string;
  /** Human-readable lines (default: only for the dev role on a TTY). */
  pretty?: boolean;
  /** Where the lines go (default stdout). */
  destination?: NodeJS.WritableStream;
}

/**
 * Every line written inside a span carries its trace id (and span id), so a log line leads to its
 * trace and a trace to its lines; the active span is OpenTelemetry's context, set by inSpan.
 */
function traceIds(): Record<string, string> {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && isSpanContextValid(ctx) ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
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

/** The logger for one request (its lines carry `reqId`). */
export function requestLogger(log: Logger | undefined, req: IncomingMessage): Logger | undefined {
  return log?.child({ reqId: requestId(req) });
}
