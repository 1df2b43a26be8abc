/**
 * Surviving a PostgreSQL outage. "Lost or refused database connection" is recognised in one place
 * (the API answers SERVICE_UNAVAILABLE for it), and a process-wide guard keeps such an error from
 * killing the process: pg-boss 10 completes and fails jobs without awaiting the promise
 * (manager.js `onFetch`), so a database that goes away just as a tick ends is an unhandled rejection,
 * and Node's default for those is to exit. Every other unhandled rejection still ends the process.
 */
import type { Logger } from 'pino';

/** Node socket errors and PostgreSQL SQLSTATEs that mean "no usable connection right now". */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PG_CODES = /^(08...|57P01|57P02|57P03|53300|3D000)$/; // connection exceptions, shutdown, starting up, too many connections
const MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|Cannot use a pool after calling end|terminating connection due to administrator command/i;

/** True when `e` (or anything in its cause chain, or an AggregateError's parts) is a lost or refused database connection. */
export function isDatabaseUnavailable(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 5) return false;
  const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; originalError?: unknown };
  if (typeof x.code === 'string' && (NET_CODES.has(x.code) || PG_CODES.test(x.code))) return true;
  if (typeof x.message === 'string' && MESSAGES.test(x.message)) return true;
  if (Array.isArray(x.errors) && x.errors.some((p) => isDatabaseUnavailable(p, depth + 1))) return true;
  return isDatabaseUnavailable(x.cause, depth + 1) || isDatabaseUnavailable(x.originalError, depth + 1);
}

let guarded = false;

/** Log (not die of) unhandled rejections that are lost database connections. Once per process. */
export function surviveDatabaseOutages(log: Logger): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (e) => {
    if (isDatabaseUnavailable(e)) {
      log.warn({ err: e instanceof Error ? e.message : String(e) }, 'database unavailable (unhandled in a library); carrying on');
      return;
    }
    throw e; // Node's default: an unhandled rejection ends the process
  });
}
