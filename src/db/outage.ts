/**
 * Surviving a PostgreSQL outage. "Lost or refused database connection" is recognised in one place
 * (the API answers UNAVAILABLE for it, api/unavailable.ts), and a process-wide guard keeps such an error from
 * killing the process: pg-boss 10 completes and fails jobs without awaiting the promise
 * (manager.js `onFetch`), so a database that goes away just as a tick ends is an unhandled rejection,
 * and Node's default for those is to exit. Every other unhandled rejection still ends the process.
 */
import type { Logger } from 'pino';

/** Node socket errors and PostgreSQL SQLSTATEs that mean "no usable connection right now". */
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// Connection exceptions, shutdown, starting up, too many connections, no such database, and a
// read-only transaction: a standby answering where the primary was (a failover the pool has not seen).
const PG_CODES = /^(08...|57P01|57P02|57P03|53300|3D000|25006)$/;
const MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery mode)|Cannot use a pool after calling end|terminating connection due to administrator command|too many clients already|in a read-only transaction/i;

/** Why the database cannot be used, in a few words, by SQLSTATE or socket error (first match of the cause chain). */
const WHY: Array<[RegExp, string]> = [
  [/^53300$|too many clients/i, 'too many connections'],
  [/^57P03$|starting up|in recovery mode/i, 'not accepting connections yet'],
  [/^57P0[12]$|administrator command|shutting down/i, 'shutting down'],
  [/^25006$|read-only transaction/i, 'read-only: a standby after a failover'],
  [/^3D000$/, 'no such database'],
  [/^ECONNREFUSED$/, 'connection refused'],
  [/timeout|^ETIMEDOUT$/i, 'connection timed out'],
  [/^(08...|ECONNRESET|EPIPE)$|Connection terminated|connection error/i, 'connection lost'],
  [/^(EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/, 'host unreachable'],
];

function* chain(e: unknown, depth = 0): Generator<{ code?: unknown; message?: unknown }> {
  if (!e || typeof e !== 'object' || depth > 5) return;
  const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; originalError?: unknown };
  yield x;
  if (Array.isArray(x.errors)) for (const p of x.errors) yield* chain(p, depth + 1);
  yield* chain(x.cause, depth + 1);
  yield* chain(x.originalError, depth + 1);
}

/** For an error isDatabaseUnavailable accepts: why, in words without SQL ("too many connections"). */
export function unavailableReason(e: unknown): string {
  for (const x of chain(e)) {
    for (const [re, why] of WHY) {
      if ((typeof x.code === 'string' && re.test(x.code)) || (typeof x.message === 'string' && re.test(x.message))) return why;
    }
  }
  return 'connection lost';
}

/**
 * A database error in words that carry no SQL, or null when `e` is not one. drizzle wraps every
 * failed query as "Failed query: <the SQL> params: <values>"; a node's error, a session's error and
 * an API answer say what PostgreSQL said instead (its SQLSTATE and message), or, when the database
 * cannot be used at all, that it is unavailable and why.
 */
export function databaseErrorText(e: unknown): string | null {
  if (isDatabaseUnavailable(e)) return `database unavailable (${unavailableReason(e)}); retrying`;
  for (const x of chain(e)) {
    const pg = x as { code?: unknown; message?: unknown; severity?: unknown };
    if (typeof pg.code === 'string' && /^[0-9A-Z]{5}$/.test(pg.code) && typeof pg.severity === 'string')
      return `database error ${pg.code}: ${String(pg.message).slice(0, 200)}`;
  }
  for (const x of chain(e)) if (typeof x.message === 'string' && x.message.startsWith('Failed query:')) return 'database error';
  return null;
}

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
