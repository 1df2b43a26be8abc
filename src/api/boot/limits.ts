/**
 * The boot endpoint's door (it takes no credential, so everything here is per address): token buckets
 * per source address (an IPv6 /64 counts as one) and for all sources together, from the rate limit
 * machinery of src/auth/rate-limit.ts, in this process's memory (N API replicas: N times the rate).
 * The defaults let a PXE storm through (10,000 nodes asking for their scripts in 10 s, each then
 * trading its ticket and, deploying, fetching its config drive: 30,000 requests in about 10 s, where
 * a burst of 20,000 and 5,000/s after leave room for retries; the earlier 10,000 and 2,000/s ran out
 * at the storm's tenth second) while one source asking faster than 20/s (burst 40) is refused 429
 * with Retry-After. Static files (artifacts, the node scripts) count against the source only: a
 * storm's kernels are not boot decisions. Requests carry no bodies here, but for the ticket
 * exchange's tiny one; a body is refused 413 before it is read.
 *
 * A refusal must cost less than what it refuses: the door runs on the bare request, before express,
 * request ids and tracing (the API's listener calls it first for /boot/v1/), and answers with one
 * writeHead. A refused answer is held back for `holdMs` (default 1 s, Retry-After's own granularity):
 * a client that asks again as soon as it is answered (a loop over kept-alive connections) then asks
 * once a second per connection instead of as fast as the API can say no. Held answers are bounded
 * (16 per source, 1,024 in all); past that a refusal is answered at once and its connection closed.
 */
import type http from 'node:http';
import type express from 'express';
import proxyaddr from 'proxy-addr';
import { createRateLimiter, type BucketShape, type LocalRateLimiter } from '../../auth/rate-limit.ts';
import { addressKey } from '../edge-support.ts';

export interface BootLimitOptions {
  perSource?: BucketShape;
  total?: BucketShape;
  /** Express's `trust proxy` value: whose X-Forwarded-For names the source (default nobody's). */
  trustProxy?: boolean | number | string | string[];
  now?: () => Date;
  /** How long a refusal (429) is held before it is sent, ms (default 1000; 0 sends at once). */
  holdMs?: number;
}

export const DEFAULT_BOOT_PER_SOURCE: BucketShape = { perSecond: 20, burst: 40 };
export const DEFAULT_BOOT_TOTAL: BucketShape = { perSecond: 5000, burst: 20_000 };
/** The exchange's body (none is needed: the ticket is in Authorization), bytes. */
export const EXCHANGE_MAX_BODY = 1024;
/** Refusals held at once, per source and in all (past them a refusal is sent at once, closing its connection). */
export const HELD_PER_SOURCE = 16;
export const HELD_IN_ALL = 1024;

/**
 * The door: `(req, res)` answers a refused request (413, 429) and says true, or says false and lets it
 * in. `path` is the request's path under /boot/v1 (no query); `counted(path)` says whether it takes
 * from the overall bucket too.
 */
export type BootDoor = (req: http.IncomingMessage, res: http.ServerResponse, path: string) => boolean;

export function bootDoor(o: BootLimitOptions, counted: (path: string) => boolean): BootDoor {
  const t = o.trustProxy ?? false;
  const trust: (addr: string, i: number) => boolean =
    typeof t === 'boolean' ? () => t : typeof t === 'number' ? (_a, i) => i < t : proxyaddr.compile(t);
  const source = (req: http.IncomingMessage) => {
    // Trusting no proxy, the source is the connection's: no X-Forwarded-For to parse on every request.
    if (t === false) return addressKey(req.socket?.remoteAddress);
    try {
      return addressKey(proxyaddr(req, trust));
    } catch {
      return addressKey(req.socket?.remoteAddress);
    }
  };
  const perSource: LocalRateLimiter = createRateLimiter({ anonymous: o.perSource ?? DEFAULT_BOOT_PER_SOURCE, now: o.now });
  const total: LocalRateLimiter = createRateLimiter({ anonymous: o.total ?? DEFAULT_BOOT_TOTAL, now: o.now, maxKeys: 1 });
  const holdMs = o.holdMs ?? 1000;
  const held = new Map<string, number>();
  let heldInAll = 0;
  const answer = (res: http.ServerResponse, status: number, body: string, headers: Record<string, string>) => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  };
  const refuse = (res: http.ServerResponse, from: string, retryAfterSeconds: number) => {
    const body = `too many requests: retry in ${retryAfterSeconds} s\n`;
    const headers = { 'retry-after': String(retryAfterSeconds) };
    const mine = held.get(from) ?? 0;
    if (holdMs <= 0 || mine >= HELD_PER_SOURCE || heldInAll >= HELD_IN_ALL) {
      return answer(res, 429, body, holdMs <= 0 ? headers : { ...headers, connection: 'close' });
    }
    held.set(from, mine + 1);
    heldInAll++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      heldInAll--;
      const left = (held.get(from) ?? 1) - 1;
      if (left > 0) held.set(from, left);
      else held.delete(from);
    };
    const timer = setTimeout(() => {
      release();
      answer(res, 429, body, headers);
    }, holdMs);
    // A client that goes away while held frees its place at once.
    res.once('close', release);
  };
  return (req, res, path) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const chunked = req.headers['transfer-encoding'] !== undefined;
    const allowed = req.method === 'POST' && path === '/exchange' ? EXCHANGE_MAX_BODY : 0;
    // A chunked body's length is not known before it is read: refused everywhere.
    if (chunked || !(declared <= allowed)) {
      answer(res, 413, `request body too large (at most ${allowed} bytes here)\n`, { connection: 'close' });
      return true;
    }
    const from = source(req);
    const r = perSource.take({ address: from });
    const all = r.ok && counted(path) ? total.take({ address: '*' }) : r;
    if (all.ok) return false;
    refuse(res, from, all.retryAfterSeconds);
    return true;
  };
}

/** The door as express middleware, for a router mounted without the API's listener in front (tests, tools). */
export function bootLimits(o: BootLimitOptions, counted: (path: string) => boolean): express.RequestHandler {
  const door = bootDoor(o, counted);
  return (req, res, next) => void (door(req, res, req.path) || next());
}
