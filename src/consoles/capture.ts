/**
 * Console capture: one console session per standalone node with a BMC and a stored password, for as
 * long as the node is registered so, its text written to console_chunks (db/consoles.ts) about once a
 * second per node and bounded by the console_* options. The session by BMC driver:
 * - `ipmi`: SOL (sol.ts, one ipmitool process);
 * - `redfish`: what the system's SerialConsole offers (redfish-console.ts): SSH in this process
 *   (ssh.ts, the BMC's host key pinned on the node), else SOL to the BMC's host, else none
 *   (`not offered`, said once at info).
 *
 * A BMC holds one SOL session per node, so one process in the site captures: the one holding a session
 * advisory lock on its own connection (every worker tries; the others wait and take over when that
 * connection dies). Each round asks the database for a fingerprint of the inventory's BMCs and reads
 * them again only when it changed (nodes added, removed or re-registered with another BMC start, stop
 * or restart their session), writes what the sessions buffered, and activates
 * again a session silent for console_idle_reconnect seconds (sol.ts: a session the BMC ended looks so).
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import { open } from '../adapters/standalone/secrets.ts';
import { poolOf, sessionClient, sessionConfigOf, type Db } from '../db/client.ts';
import { appendConsole, appendConsoles, pruneConsoles } from '../db/consoles.ts';
import { bmcsFingerprint, listBmcs, pinBmcHostKey, type NodeBmc } from '../db/node-inventory.ts';
import { getOptions } from '../db/options.ts';
import { RedfishClient, type RedfishOptions } from '../adapters/standalone/redfish.ts';
import { BmcGuard } from '../adapters/standalone/bmc-guard.ts';
import { Turns } from '../domain/lists.ts';
import { RedfishConsole } from './redfish-console.ts';
import { SolSession, type SolOptions } from './sol.ts';
import type { SshOptions } from './ssh.ts';

/** Two-key advisory lock: "bo" (as engine/leases.ts) and this number, held by the capturing process. */
const LOCK = [0x626f, 0x636f6e] as const;

export interface CaptureOptions {
  /** Secret key that opens the stored BMC passwords. */
  secretKey?: Buffer;
  log: Logger;
  /** Inventory re-read and buffered text written this often, ms (default 1000). */
  roundMs?: number;
  /** Old attempts and chunks are dropped this often, ms (default 60000). */
  pruneMs?: number;
  sol?: SolOptions;
  ssh?: Omit<SshOptions, 'log'>;
  /** The Redfish client SerialConsole is read with (default: one of the capture's own with `redfishOptions`). */
  redfish?: RedfishClient;
  redfishOptions?: RedfishOptions;
  /**
   * The guard SerialConsole reads go through (default: one of the capture's own, 32 calls at once).
   * The worker's power calls' guard, when given, keeps a read from overlapping a power call at a BMC.
   */
  guard?: BmcGuard;
}

interface Captured {
  session: SolSession | RedfishConsole;
  /** What the session was started with (address, user, sealed secret): a change restarts it. */
  key: string;
  buffer: string;
}

export class ConsoleCapture {
  private lockClient?: pg.Client;
  private readonly nodes = new Map<string, Captured>();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private lastPrune = 0;
  private round: Promise<void> = Promise.resolve();
  private redfish?: RedfishClient;
  /** Nodes already said at info to have no console offered. */
  private readonly toldNone = new Set<string>();
  private readonly guard: BmcGuard;
  /** SerialConsole reads at once before the guard (redfish-console.ts). */
  private readonly reads = new Turns(8);
  /** console_bytes_per_boot as last read: no node's buffer holds more than that many characters. */
  private bytesPerBoot = 262_144;
  /** bmcsFingerprint when the BMCs were last read ('' = not yet; reset when the sessions stop). */
  private inventoryFingerprint = '';

  constructor(
    private readonly db: Db,
    private readonly o: CaptureOptions,
  ) {
    this.guard = o.guard ?? new BmcGuard({ concurrency: 32 });
  }

  start(): void {
    this.schedule(0);
  }

  /** Nodes with a session now, and each one's state. */
  sessions(): Array<{ node: string; way: string; state: string; reconnects: number; lastError: string }> {
    return [...this.nodes].map(([node, c]) => ({
      node,
      way: c.session instanceof SolSession ? 'sol' : c.session.way || 'unread',
      state: c.session.state,
      reconnects: c.session.reconnects,
      lastError: c.session.lastError,
    }));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.round = this.tick()
        .catch((e) => this.o.log.warn({ err: e }, 'console capture round failed'))
        .finally(() => this.schedule(this.o.roundMs ?? 1000));
    }, ms);
  }

  private async tick(): Promise<void> {
    if (!(await getOptions(this.db)).console_capture) {
      if (this.nodes.size) await this.stopAll();
      return;
    }
    if (!(await this.holdLock())) return;
    await this.sync();
    await this.flush();
    if (Date.now() - this.lastPrune >= (this.o.pruneMs ?? 60_000)) {
      this.lastPrune = Date.now();
      const o = await getOptions(this.db);
      await pruneConsoles(this.db, { bootsKept: o.console_boots_kept, retentionDays: o.console_retention_days });
    }
  }

  /** True while this process holds the capture lock; takes it when free. Losing the connection ends every session. */
  private async holdLock(): Promise<boolean> {
    if (this.lockClient) return true;
    const client = sessionClient({ ...sessionConfigOf(poolOf(this.db)), application_name: 'bootorch-console' });
    try {
      await client.connect();
      const r = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [...LOCK]);
      if (!r.rows[0]?.ok) {
        await client.end().catch(() => {});
        return false;
      }
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    client.on('end', () => {
      if (this.lockClient !== client) return;
      this.lockClient = undefined;
      this.o.log.warn('console capture lock connection lost: sessions stopped until it is taken again');
      void this.stopAll();
    });
    this.lockClient = client;
    this.o.log.info('console capture started in this process');
    return true;
  }

  private async sync(): Promise<void> {
    // The inventory's BMCs are read again only when they changed (one row back a round, not 100,000).
    const fingerprint = await bmcsFingerprint(this.db);
    if (fingerprint === this.inventoryFingerprint) return;
    const rows = await listBmcs(this.db);
    const wanted = new Map(rows.map((r) => [r.id, r]));
    for (const [id, c] of this.nodes) {
      const r = wanted.get(id);
      if (!r || c.key !== keyOf(r)) {
        this.nodes.delete(id);
        await this.write(id, c.buffer);
        await c.session.stop();
      }
    }
    if (!this.o.secretKey) {
      this.inventoryFingerprint = fingerprint;
      return;
    }
    for (const r of rows) {
      if (this.nodes.has(r.id)) continue;
      let password: string;
      try {
        password = open(this.o.secretKey, r.id, r.bmcSecret);
      } catch (e) {
        this.o.log.warn({ xname: r.id, err: e }, 'console capture: BMC password does not open');
        continue;
      }
      const c: Captured = {
        key: keyOf(r),
        buffer: '',
        session: this.session(r, password, (text) => {
          // A BMC printing faster than the store writes (or a store that stalls) keeps only the newest text.
          c.buffer += text;
          if (c.buffer.length > this.bytesPerBoot) c.buffer = c.buffer.slice(-this.bytesPerBoot);
        }),
      };
      this.nodes.set(r.id, c);
    }
    // Only now: a round that failed half-way reads the inventory again in the next.
    this.inventoryFingerprint = fingerprint;
  }

  private session(r: NodeBmc, password: string, onText: (text: string) => void): SolSession | RedfishConsole {
    const target = { id: r.id, address: r.bmcAddress, username: r.bmcUsername, password };
    if (r.bmcDriver === 'ipmi') return new SolSession(target, onText, this.o.sol);
    this.redfish ??= this.o.redfish ?? new RedfishClient(this.o.redfishOptions);
    // The stored pin is what counts: '' when it could not be stored (the key is then not trusted).
    const pin = (fp: string) =>
      pinBmcHostKey(this.db, r.id, r.bmcAddress, fp).then(
        (stored) => {
          if (stored === fp) this.o.log.info({ xname: r.id, fingerprint: fp }, 'console capture: BMC SSH host key pinned');
          return stored;
        },
        (e: unknown) => {
          this.o.log.warn({ xname: r.id, err: e }, 'console capture: BMC SSH host key not stored');
          return '';
        },
      );
    return new RedfishConsole({ ...target, hostKey: r.bmcHostKey }, onText, pin, {
      redfish: this.redfish,
      guard: this.guard,
      reads: this.reads,
      sol: this.o.sol,
      ssh: { ...this.o.ssh, log: this.o.log },
    });
  }

  /** Says once at info which nodes' BMCs offer no console (a node re-registered may be said again). */
  private tellNone(): void {
    // One pass over the nodes and no copy of them: at 100,000 nodes this runs every second.
    const none: string[] = [];
    for (const [id, c] of this.nodes) if (c.session.state === 'not offered' && !this.toldNone.has(id)) none.push(id);
    for (const id of this.toldNone) if (this.nodes.get(id)?.session.state !== 'not offered') this.toldNone.delete(id);
    if (!none.length) return;
    for (const id of none) this.toldNone.add(id);
    this.o.log.info(
      { nodes: none.slice(0, 20), count: none.length },
      'console capture: the BMC offers no serial console (SerialConsole has neither SSH nor IPMI enabled)',
    );
  }

  private async flush(): Promise<void> {
    const o = await getOptions(this.db);
    const pending: Array<[string, Captured]> = [];
    for (const entry of this.nodes) {
      entry[1].session.reactivateIfIdle(o.console_idle_reconnect * 1000);
      if (entry[1].buffer) pending.push(entry);
    }
    this.tellNone();
    if (!pending.length) return;
    // Every node's text in a few statements (db/consoles.ts appendConsoles): one statement per node
    // does not keep up with thousands booting.
    this.bytesPerBoot = o.console_bytes_per_boot;
    const entries = pending.map(([node, c]) => {
      const text = c.buffer;
      c.buffer = '';
      return { node, text, c };
    });
    try {
      await appendConsoles(this.db, entries, o.console_bytes_per_boot);
    } catch (e) {
      // Nothing of a failed round is lost: its text goes back before what came since, for the next round.
      for (const { text, c } of entries) c.buffer = (text + c.buffer).slice(-this.bytesPerBoot);
      throw e;
    }
  }

  private async write(id: string, text: string, bytes?: number): Promise<void> {
    if (!text) return;
    await appendConsole(this.db, id, text, bytes ?? (await getOptions(this.db)).console_bytes_per_boot);
  }

  private async stopAll(): Promise<void> {
    const all = [...this.nodes.values()];
    this.nodes.clear();
    this.inventoryFingerprint = '';
    await Promise.all(all.map((c) => c.session.stop()));
  }

  /** Stop every session, write what they buffered, and let the lock go. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
    const all = [...this.nodes];
    this.nodes.clear();
    await Promise.all(all.map(([, c]) => c.session.stop()));
    for (const [id, c] of all) await this.write(id, c.buffer).catch(() => {});
    const client = this.lockClient;
    this.lockClient = undefined;
    await client?.end().catch(() => {});
    if (!this.o.redfish) await this.redfish?.close();
  }
}

const keyOf = (r: { bmcDriver: string; bmcAddress: string; bmcUsername: string; bmcSecret: string }) =>
  createHash('sha256').update(`${r.bmcDriver}\n${r.bmcAddress}\n${r.bmcUsername}\n${r.bmcSecret}`).digest('base64url');
