/**
 * The boot endpoint's door (it takes no credential, so everything here is per address): token buckets
 * per source address (an IPv6 /64 counts as one) and for all sources together, from the rate limit
 * machinery of src/auth/rate-limit.ts, in this process's memory (N API replicas: N times the rate).
 * The defaults let a PXE storm through (10,000 nodes asking for their scripts in 10 s, each then
 * trading its ticket and, deploying, fetching its config drive: 30,000 requests in about 10 s, where
 * a burst of 20,000 and 5,000/s after leave room for retries; the earlier 10,000 and 2,000/s ran out
 * at the storm's tenth second) while one source asking faster than 20/s (burst 40) is refused 429
 * with Retry-After. Static files
 * (artifacts, the node scripts) count against the source only: a storm's kernels are not boot
 * decisions. Requests carry no bodies here, but for the ticket exchange's tiny one; a body is refused
 * 413 before it is read.
 */
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
}

export const DEFAULT_BOOT_PER_SOURCE: BucketShape = { perSecond: 20, burst: 40 };
export const DEFAULT_BOOT_TOTAL: BucketShape = { perSecond: 5000, burst: 20_000 };
/** The exchange's body (none is needed: the ticket is in Authorization), bytes. */
export const EXCHANGE_MAX_BODY = 1024;

/** The middleware; `counted(req)` says whether a request takes from the overall bucket too. */
export function bootLimits(o: BootLimitOptions, counted: (req: express.Request) => boolean): express.RequestHandler {
  const t = o.trustProxy ?? false;
  const trust: (addr: string, i: number) => boolean =
    typeof t === 'boolean' ? () => t : typeof t === 'number' ? (_a, i) => i < t : proxyaddr.compile(t);
  const source = (req: express.Request) => {
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
  return (req, res, next) => {
    const declared = Number(req.get('content-length') ?? 0);
    const chunked = req.get('transfer-encoding') !== undefined;
    const allowed = req.method === 'POST' && req.path === '/exchange' ? EXCHANGE_MAX_BODY : 0;
    // A chunked body's length is not known before it is read: refused everywhere.
    if (chunked || !(declared <= allowed)) {
      res.set('connection', 'close');
      return void res.status(413).type('text/plain').send(`request body too large (at most ${allowed} bytes here)\n`);
    }
    const r = perSource.take({ address: source(req) });
    const all = r.ok && counted(req) ? total.take({ address: '*' }) : r;
    if (!all.ok) {
      res.set('retry-after', String(all.retryAfterSeconds));
      return void res.status(429).type('text/plain').send(`too many requests: retry in ${all.retryAfterSeconds} s\n`);
    }
    next();
  };
}
