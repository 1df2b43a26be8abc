/**
 * The guard every fetch of an operator-written URL goes through (image manifests and the
 * boot-parameters objects they link, in http and standalone mode; ServiceClient asks it for each URL
 * and each redirect hop). An origin is fetched only when the admin allowed it (outbound-policy.ts);
 * at an origin the admin did not name (allowed by `*`), every address the host resolves to must be
 * public, checked in the connection's own DNS lookup and again on the connected socket, so a name
 * that resolves differently between a check and the connect cannot reach inside.
 */
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { addressRefusal, hostRefusal, ORIGINS_SETTING, type OriginList } from './outbound-policy.ts';

/** A fetch the guard refused; ServiceClient turns it into a non-transient ServiceError. */
export class OutboundRefused extends Error {
  readonly code = 'ERR_OUTBOUND_REFUSED';
}

export interface OutboundGuardOptions {
  origins: OriginList;
  /** PEM CA bundle to trust (besides the system's). */
  caFile?: string;
  /** Largest answer read, in bytes; a longer one is abandoned. */
  maxBytes: number;
  /** Every address of a name (default dns.lookup's; tests give one that answers what they need). */
  resolve?: Resolve;
}

export class OutboundGuard {
  readonly maxBytes: number;
  private readonly origins: OriginList;
  /** Origins the admin named: their addresses are the admin's choice. */
  private readonly listedAgent: Agent;
  /** Origins allowed by a wildcard: public addresses only. */
  private readonly publicAgent: Agent;

  constructor(o: OutboundGuardOptions) {
    this.origins = o.origins;
    this.maxBytes = o.maxBytes;
    const ca = o.caFile ? readFileSync(o.caFile, 'utf8') : undefined;
    this.listedAgent = new Agent(ca ? { connect: { ca } } : {});
    const connect = buildConnector({ ...(ca ? { ca } : {}), lookup: publicLookup(o.resolve ?? systemResolve) });
    this.publicAgent = new Agent({
      connect: (opts, callback) => {
        const origin = `origin ${opts.protocol}//${opts.host ?? opts.hostname}`;
        const literal = hostRefusal(opts.hostname);
        if (literal) return callback(refused(origin, literal), null);
        connect(opts, (err, socket) => {
          if (err || !socket) return callback(err ?? new Error('no socket'), null);
          // The address actually connected to, whatever resolved it.
          const why = socket.remoteAddress ? addressRefusal(socket.remoteAddress) : 'unknown address';
          if (!why) return callback(null, socket);
          socket.destroy();
          callback(refused(origin, `connected to ${socket.remoteAddress}, ${why}`), null);
        });
      },
    });
  }

  /**
   * The dispatcher to fetch `url` through; throws OutboundRefused when its origin is not allowed, or
   * (at an origin the admin did not name) its host is internal by name or address literal.
   */
  dispatcherFor(url: URL): Dispatcher {
    const origin = url.origin;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused(`${url.protocol} URLs are not fetched`);
    if (this.origins.listed.has(origin)) return this.listedAgent;
    const literal = hostRefusal(url.hostname);
    const wildcard = this.origins.anyPublic === 'http' || (this.origins.anyPublic === 'https' && url.protocol === 'https:');
    if (!wildcard)
      throw new OutboundRefused(`origin ${origin} is not allowed (${ORIGINS_SETTING})${literal ? `; ${literal} refused` : ''}`);
    if (literal) throw refused(`origin ${origin}`, literal);
    return this.publicAgent;
  }

  async close(): Promise<void> {
    await Promise.all([this.listedAgent.close(), this.publicAgent.close()]);
  }
}

/** `what` (an origin or a host) and why, e.g. "origin http://10.0.0.5: private address refused (...)". */
function refused(what: string, why: string): OutboundRefused {
  return new OutboundRefused(`${what}: ${why} refused (name the origin in ${ORIGINS_SETTING} to allow it)`);
}

/**
 * The connection's own lookup: fails when any address of the name is internal (all of them, not only
 * the one connected to first), so what was checked is what the socket connects to.
 */
function publicLookup(resolve: Resolve): LookupFunction {
  return (hostname, options, callback) => {
    const f = options.family;
    const family = f === 4 || f === 'IPv4' ? 4 : f === 6 || f === 'IPv6' ? 6 : 0;
    const answer = (addresses: LookupAddress[]) => {
      const bad = addresses.find((a) => addressRefusal(a.address));
      if (bad) return callback(refused(`host ${hostname}`, `resolves to ${bad.address}, ${addressRefusal(bad.address)}`), '', 0);
      if (!addresses.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    // Called outside the promise, as dns.lookup calls back: a throw in net's callback is not swallowed.
    resolve(hostname, family).then(
      (addresses) => process.nextTick(answer, addresses),
      (err: NodeJS.ErrnoException) => process.nextTick(callback, err, '', 0),
    );
  };
}

/** Every address of `hostname` (of one family, or 0 for both). */
export type Resolve = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname, family) => dnsLookup(hostname, { all: true, family });
