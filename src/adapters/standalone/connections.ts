/**
 * The connections a process keeps to its Redfish BMCs: one per BMC origin (the guard makes one call
 * at a time per BMC), kept idle up to `keepAliveMs` so the next phase's call skips the TCP (and TLS)
 * handshake, but at most `keep` of them over every BMC. Past that, the connection of a call that has
 * ended is closed at once. Without the bound a site's 100,000 BMCs hold 100,000 sockets for a minute:
 * past the process's open-file limit (EMFILE, measured: 58,035 of 100,000 nodes failed so), and a
 * session slot on each BMC, which may have few.
 *
 * The bound is per process: every client's connections count against it (the API has one for explain
 * and one per discovery sweep). One TLS connector per client, so its session cache and CA serve every
 * BMC connection: a connection not kept costs a resumed handshake, not a full one.
 *
 * Kept are the BMCs called first, not the latest: a reboot calls its nodes in about the same order
 * each phase, and keeping the latest would keep none that is called again. The kept ones leave when
 * their connection closes (idle past keepAliveMs, or closed by the BMC), which makes room for others.
 */
import { readFileSync } from 'node:fs';
import { Client, buildConnector, type Dispatcher } from 'undici';

export interface BmcConnectionsOptions {
  /** Connections kept idle at most, over every BMC and every client of the process (default keptConnectionsDefault()). 0 keeps none. */
  keep?: number;
  /** How long an idle connection is kept, ms. */
  keepAliveMs: number;
  /** TLS options of the connections (the CA BMC certificates are checked against). */
  connect?: { ca: string };
}

interface Entry {
  client: Client;
  /** Calls using it now. */
  busy: number;
  /** Its socket is open. */
  connected: boolean;
}

/** Origins with a client, over every BmcConnections of this process: what the bound is checked against. */
let inProcess = 0;

export class BmcConnections {
  private readonly clients = new Map<string, Entry>();
  private readonly keep: number;
  private readonly disconnects = new Set<() => void>();
  private readonly connector: buildConnector.connector;

  constructor(private readonly o: BmcConnectionsOptions) {
    this.keep = o.keep ?? keptConnectionsDefault();
    this.connector = buildConnector({ ...(o.connect ?? {}) });
    // Read now, while files can be opened: an EMFILE failure names it (bmc.ts localFailure).
    openFileLimit();
  }

  /** `fn` with the origin's dispatcher; its connection is closed afterwards when more than `keep` are kept. */
  async use<T>(origin: string, fn: (d: Dispatcher) => Promise<T>): Promise<T> {
    const e = this.entry(origin);
    e.busy++;
    try {
      return await fn(e.client);
    } finally {
      e.busy--;
      // Not kept: over the bound, or no connection to keep (it failed or closed under the call).
      if (e.busy === 0 && (!e.connected || inProcess > this.keep)) this.drop(origin, e);
    }
  }

  /** Whether a connection to the origin is open now (a call would go out on a kept connection). */
  connected(origin: string): boolean {
    return this.clients.get(origin)?.connected ?? false;
  }

  /** Origins with a client, and open sockets among them (for tests and the bench). */
  stats(): { clients: number; connected: number; keep: number } {
    let connected = 0;
    for (const e of this.clients.values()) if (e.connected) connected++;
    return { clients: this.clients.size, connected, keep: this.keep };
  }

  /** Resolves when one of the connections next closes (for tests). */
  nextDisconnect(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.disconnects.delete(done);
        resolve();
      };
      this.disconnects.add(done);
    });
  }

  async close(): Promise<void> {
    const all = [...this.clients.values()];
    inProcess -= this.clients.size;
    this.clients.clear();
    await Promise.all(all.map((e) => e.client.close()));
  }

  private entry(origin: string): Entry {
    let e = this.clients.get(origin);
    if (e) return e;
    const client = new Client(origin, {
      keepAliveTimeout: this.o.keepAliveMs,
      keepAliveMaxTimeout: this.o.keepAliveMs,
      connect: this.connector,
    });
    const entry: Entry = (e = { client, busy: 0, connected: false });
    client.on('connect', () => {
      entry.connected = true;
    });
    const gone = () => {
      entry.connected = false;
      // Idle and closed (kept past its time, or closed by the BMC): it holds nothing, and leaves room.
      if (entry.busy === 0) this.drop(origin, entry);
      for (const f of [...this.disconnects]) f();
    };
    client.on('disconnect', gone);
    client.on('connectionError', gone);
    this.clients.set(origin, e);
    inProcess++;
    return e;
  }

  private drop(origin: string, e: Entry) {
    if (this.clients.get(origin) === e) {
      this.clients.delete(origin);
      inProcess--;
    }
    if (!e.client.closed && !e.client.destroyed) void e.client.close().catch(() => {});
  }
}

/**
 * Half the process's open-file limit (Linux: /proc/self/limits, which Node raises to the hard limit at
 * start), at most 50,000: the other half is left to the database pool, consoles and the API's own
 * clients. 1,024 where the limit cannot be read.
 */
export function keptConnectionsDefault(limits = '/proc/self/limits'): number {
  const n = openFileLimit(limits);
  return n === null ? 1024 : Math.max(16, Math.min(50_000, Math.floor(n / 2)));
}

/**
 * The soft limit of open files of this process, or null when not known (unlimited or unreadable).
 * Read once: when it is needed most, to name it in an EMFILE failure, the file cannot be opened.
 */
export function openFileLimit(limits = '/proc/self/limits'): number | null {
  if (limits === '/proc/self/limits' && ownLimit !== undefined) return ownLimit;
  let n: number | null = null;
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync(limits, 'utf8'));
    n = m ? Number(m[1]) : null;
  } catch {
    return null;
  }
  if (limits === '/proc/self/limits') ownLimit = n;
  return n;
}

let ownLimit: number | null | undefined;
