/**
 * The simulator as a site without CSM (`bootorch sim --standalone`): every node has a BMC of its own
 * (Redfish, with the BMC fault knobs), network-boots from bootorch's `/boot/v1` as iPXE does and
 * reports with the credential it traded its boot ticket for.
 *
 * BMC addresses. bootorch keys its per-BMC turn and circuit on a BMC's host and port, so every node
 * needs an address of its own. A listener per node (sim/bmc-farm.ts) costs a file descriptor each
 * before a single call, and 100,000 of them do not fit a process. Instead one listener (one port, on
 * every local address) answers for all of them, and each node's BMC is a loopback address of its own
 * (Linux routes all of 127.0.0.0/8 to `lo`): node i's BMC is 127.64.x.y, so its URL is
 * `http://127.64.x.y:PORT/redfish/v1/Systems/<xname>`. The listener tells the BMCs apart by the address
 * a connection was made to, as real BMCs at their own IPs would be, and serves only that node's system
 * there. A connection to any other address is dropped. `ports` mode (a listener per node) remains
 * for hosts without a routed 127/8.
 *
 * Network boot. On power-on (after the boot delay) a node asks for `GET /boot/v1/bootscript?mac=` from
 * its own source address (node i is 127.128.x.y: bootorch's /boot/v1 rate limits count per source, as
 * on a real boot network), on a connection of its own, as iPXE does. A script with a kernel line
 * boots it: the kernel's command line gives `xname`, `bss_referral_token` and the one-time
 * `bootorch_ticket`, which the node trades at once (`POST /boot/v1/exchange`, as reporter.sh does first)
 * for its node credential; its reporter then reports to bootorch's GraphQL with that credential. A
 * deploy ramdisk (`bootorch_deploy=1`) runs the simulated deploy agent (sim/deploy-agent.ts) over HTTP:
 * the exchange, `deployHeartbeat`, the config drive from `/boot/v1/config-drive/<xname>`. The
 * "no network boot is scheduled" script boots the local disk. 429 (with its Retry-After), 5xx and
 * connection failures are retried a few times with backoff; counted in `/sim/counters` (`pxe`).
 */
import http from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Agent } from 'undici';
import { Turns } from '../domain/lists.ts';
import type { DeployRecord } from '../domain/deploy.ts';
import type { DeployHandlers, Heartbeat } from './deploy-agent.ts';
import { handle, type Exchange } from './server.ts';
import { ownBmcPath } from './http/redfish-inventory.ts';
import { simMac } from './macs.ts';
import type { ReportCounts } from './http/control.ts';
import type { BssEntry, SimNode } from './types.ts';
import type { SimWorld } from './world.ts';

/** Second octets of the BMCs' and the nodes' loopback addresses (64 blocks of 65,024 each). */
const BMC_NET = 64;
const NODE_NET = 128;
/** The most nodes the loopback plan addresses (64 × 256 × 254). */
export const MAX_STANDALONE_NODES = 64 * 256 * 254;

/** 127.<net + hi>.<lo>.<1..254>: the i-th address of a block, never a .0 or .255 host. */
function loopback(i: number, net: number): string {
  if (!(i >= 0 && i < MAX_STANDALONE_NODES)) throw new RangeError(`node index ${i} is outside 0..${MAX_STANDALONE_NODES - 1}`);
  const a = Math.floor(i / 254);
  return `127.${net + (a >> 8)}.${a & 255}.${(i % 254) + 1}`;
}

/** Node i's BMC address. */
export const bmcAddress = (i: number) => loopback(i, BMC_NET);
/** Node i's own address on the boot network (the source of its PXE requests). */
export const nodeAddress = (i: number) => loopback(i, NODE_NET);
export { simMac };

export interface BmcHost {
  /** The node's ComputerSystem URL (its BMC address for bootorch's inventory). */
  url(id: string): string;
  port: number;
  /** TCP connections accepted so far, over every BMC (tests count how often bootorch reconnects). */
  connections(): number;
  close(): Promise<void>;
}

/**
 * How long the BMCs keep an idle connection, ms: a little longer than bootorch's Redfish client keeps
 * it (REDFISH_KEEP_ALIVE_MS), so the client closes first and never writes into a connection the BMC is
 * closing. Announced as `Keep-Alive: timeout=65`, which the client takes as 63 s, capped at its 60.
 */
export const BMC_KEEP_ALIVE_MS = 65_000;

/** One listener for every node's BMC, each at its own loopback address (see the file's comment). */
export async function startBmcHost(
  world: SimWorld,
  reports: ReportCounts,
  o: { port?: number; onExchange?: (x: Exchange) => void; keepAliveMs?: number } = {},
): Promise<BmcHost> {
  const ids = world.ids();
  const byAddress = new Map(ids.map((id, i) => [bmcAddress(i), id]));
  const index = new Map(ids.map((id, i) => [id, i]));
  const server = http.createServer((req, res) => {
    const id = byAddress.get((req.socket.localAddress ?? '').replace(/^::ffff:/, ''));
    // Not a BMC address of this simulator: nobody is there.
    if (!id) return void req.socket.destroy();
    const path = new URL(req.url ?? '/', 'http://bmc').pathname;
    if (!ownBmcPath(id, path)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not this BMC's system: ${path}`);
      return;
    }
    handle(world, reports, req, res, o.onExchange, id).catch(() => res.destroy());
  });
  // Keep-alive as BMCs do (bootorch's client reuses a connection per BMC); 10,000 idle sockets are fine.
  server.keepAliveTimeout = o.keepAliveMs ?? BMC_KEEP_ALIVE_MS;
  server.maxConnections = 60_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '0.0.0.0', () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: (id) => `http://${bmcAddress(index.get(id)!)}:${port}/redfish/v1/Systems/${id}`,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A node as `bootorch node apply -f` takes it: the password from $SIM_BMC_PASSWORD, never in the file. */
export interface StandaloneNodeEntry {
  xname: string;
  mac: string;
  role: string;
  sub_role: string;
  arch: 'X86' | 'ARM';
  groups: string[];
  bmc: { driver: 'redfish'; address: string; username: string; password_env: string };
}

export const BMC_PASSWORD_ENV = 'SIM_BMC_PASSWORD';

/** The simulator's nodes as registrations for bootorch (node-registration.ts's fields). */
export function standaloneNodes(world: SimWorld, bmcUrl: (id: string) => string): StandaloneNodeEntry[] {
  const groupsOf = new Map<string, string[]>();
  for (const [g, members] of world.groups) for (const id of members) groupsOf.set(id, [...(groupsOf.get(id) ?? []), g]);
  return world.ids().map((id, i) => {
    const n = world.node(id)!;
    return {
      xname: id,
      mac: simMac(i),
      role: n.role,
      sub_role: n.subRole,
      arch: n.arch === 'ARM' ? 'ARM' : 'X86',
      groups: groupsOf.get(id) ?? [],
      bmc: { driver: 'redfish', address: bmcUrl(id), username: 'root', password_env: BMC_PASSWORD_ENV },
    };
  });
}

export interface PxeOptions {
  /** bootorch's base URL for /boot/v1 (BOOTORCH_BOOT_URL). */
  bootUrl: string;
  /** GraphQL URL for the deploy agents' heartbeats (default bootUrl + /graphql). */
  graphqlUrl?: string;
  /** Boot-network requests in flight at once over all nodes (default 1024; a real site has no such bound). */
  connections?: number;
  /** Tries per request (default 6), the backoff's base and cap (ms; a 429's Retry-After counts instead). */
  attempts?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  timeoutMs?: number;
  /** Told of every try: its step (bootscript, exchange, config-drive), how long it took, its status (0: no answer). */
  onAnswer?(step: string, ms: number, status: number): void;
}

const gunzip = promisify(zlib.gunzip);

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** Thrown when a node stops trying a boot-network request (its tries spent, or a final refusal). */
export class PxeError extends Error {
  constructor(
    readonly node: string,
    readonly step: string,
    readonly status: number | undefined,
    message: string,
  ) {
    super(`${node} ${step}: ${message}`);
    this.name = 'PxeError';
  }
}

/** deployHeartbeat's answer, flat (DeployHeartbeatAccepted or ReportRefused). */
interface HeartbeatAnswer {
  __typename: string;
  code?: string;
  message?: string;
  imageUrl: string;
  imageFormat: string;
  imageChecksum: string;
  rootDeviceSize?: number | null;
  rootDeviceName?: string | null;
  rootDeviceSerial?: string | null;
  hasConfigDrive: boolean;
}

const TICKET_ON_DRIVE = /^btk_[A-Za-z0-9_-]{43}/;

/**
 * The boot ticket a config drive carries, found in its bytes: a match on the drive decoded as one string
 * would be a slice of that string and keep the whole drive alive for as long as the ticket is held (at
 * 10,000 nodes, every drive of the storm).
 */
function ticketOnDrive(drive: Buffer): string | undefined {
  for (let at = drive.indexOf('btk_'); at >= 0; at = drive.indexOf('btk_', at + 4)) {
    const t = TICKET_ON_DRIVE.exec(drive.subarray(at, at + 47).toString('latin1'))?.[0];
    if (t) return t;
  }
  return undefined;
}

/** The nodes' side of bootorch's /boot/v1: boot scripts, tickets, credentials, config drives. */
export class SimPxe {
  /** Node credentials (bto_…) from the exchange, by xname: what their reporters send. */
  readonly credentials = new Map<string, string>();
  private readonly index: Map<string, number>;
  private readonly turns: Turns;
  private readonly base: URL;
  private readonly gql: string;
  /** Which node holds a ticket (the deploy agent's exchange names only the ticket). */
  private readonly ticketOwner = new Map<string, string>();
  private readonly pool = new Agent({ connections: 64, keepAliveTimeout: 30_000 });

  constructor(
    private readonly world: SimWorld,
    private readonly o: PxeOptions,
  ) {
    this.index = new Map(world.ids().map((id, i) => [id, i]));
    this.turns = new Turns(o.connections ?? 1024);
    this.base = new URL(o.bootUrl.replace(/\/+$/, ''));
    this.gql = o.graphqlUrl ?? `${this.base.origin}/graphql`;
  }

  /** Boot the world's nodes from bootorch, and run their deploy agents against it. */
  install(): void {
    this.world.setNetboot((node) => this.netboot(node));
    this.world.setDeployHandlers(this.deployHandlers());
  }

  close(): void {
    this.world.setNetboot(undefined);
    this.world.setDeployHandlers(undefined);
    void this.pool.destroy();
  }

  /** One request from node `id`'s own address on a connection of its own, tried until answered. */
  async request(id: string, step: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const attempts = this.o.attempts ?? 6;
    const pxe = this.world.counters.pxe;
    for (let attempt = 1; ; attempt++) {
      let answer: Answer | undefined;
      let error = '';
      await this.turns.take();
      const t = performance.now();
      try {
        answer = await this.once(id, method, path, headers);
      } catch (e) {
        error = (e as Error).message;
      } finally {
        this.turns.give();
      }
      this.o.onAnswer?.(step, performance.now() - t, answer?.status ?? 0);
      if (answer && answer.status < 500 && answer.status !== 429) return answer;
      if (answer?.status === 429) pxe.throttled++;
      // A ticket is spent once: an exchange that may have reached bootorch (a 5xx, a timeout, a cut
      // connection) is not sent again (the second would be refused as a reused ticket); a 429 or a
      // refused connection never reached it.
      const unsent = answer ? answer.status === 429 : /ECONNREFUSED/.test(error);
      if (attempt >= attempts || this.world.timers.isClosed || (step === 'exchange' && !unsent)) {
        pxe.failed++;
        throw new PxeError(id, step, answer?.status, answer ? `HTTP ${answer.status} ${answer.body.toString().trim()}` : error);
      }
      pxe.retried++;
      const retryAfter = Number(answer?.headers['retry-after']);
      const backoff = Math.min((this.o.retryBaseMs ?? 200) * attempt, this.o.retryMaxMs ?? 5000);
      await this.world.timers.sleep(retryAfter > 0 ? retryAfter * 1000 : backoff);
    }
  }

  private once(id: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
    const i = this.index.get(id);
    if (i === undefined) return Promise.reject(new Error(`${id} is not a node of this simulator`));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.base.hostname,
          port: this.base.port || 80,
          path: `${this.base.pathname.replace(/\/$/, '')}${path}`,
          method,
          headers: { ...headers, connection: 'close' },
          localAddress: nodeAddress(i),
          agent: false,
          timeout: this.o.timeoutMs ?? 30_000,
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
  }

  /** What iPXE does at power-on: the boot script by MAC; a kernel line boots, sanboot boots the disk. */
  async netboot(node: SimNode): Promise<BssEntry | 'disk'> {
    const i = this.index.get(node.id)!;
    const pxe = this.world.counters.pxe;
    const r = await this.request(node.id, 'bootscript', 'GET', `/boot/v1/bootscript?mac=${encodeURIComponent(simMac(i))}`);
    const script = r.body.toString();
    if (r.status !== 200) {
      pxe.failed++;
      throw new PxeError(node.id, 'bootscript', r.status, script.trim());
    }
    pxe.scripts++;
    const kernel = /^kernel (\S+) (.*) \|\| goto kernel_failed$/m.exec(script);
    if (!kernel) {
      pxe.local++;
      return 'disk';
    }
    const params = kernel[2]!;
    const arg = (k: string) => new RegExp(`(?:^|\\s)${k}=(\\S+)`).exec(params)?.[1];
    if (arg('xname') !== node.id) {
      pxe.failed++;
      throw new PxeError(node.id, 'bootscript', r.status, `the script for ${simMac(i)} is ${arg('xname')}'s`);
    }
    const initrd = /^initrd --name initrd (\S+)/m.exec(script)?.[1] ?? '';
    const ticket = arg('bootorch_ticket');
    if (ticket) {
      this.ticketOwner.set(ticket, node.id);
      // The reporter trades its ticket first thing; a deploy ramdisk's agent does it itself.
      if (arg('bootorch_deploy') !== '1') this.credentials.set(node.id, await this.exchange(ticket));
    }
    return { kernel: kernel[1]!, initrd, params, token: arg('bss_referral_token') ?? '' };
  }

  /** POST /boot/v1/exchange from the ticket holder's address: its node credential. */
  async exchange(ticket: string): Promise<string> {
    const id = this.ticketOwner.get(ticket);
    if (!id) throw new PxeError('?', 'exchange', undefined, 'a ticket no node of this simulator was given');
    const r = await this.request(id, 'exchange', 'POST', '/boot/v1/exchange', { authorization: `Bearer ${ticket}` });
    if (r.status !== 200) {
      this.world.counters.pxe.failed++;
      throw new PxeError(id, 'exchange', r.status, r.body.toString().trim());
    }
    this.ticketOwner.delete(ticket);
    this.world.counters.pxe.exchanges++;
    return r.body.toString().trim();
  }

  /** GET /boot/v1/config-drive/<xname> with the node's deploy credential. */
  async configDrive(id: string, credential: string): Promise<Buffer> {
    // As the deploy agent's curl --compressed asks for it.
    const r = await this.request(id, 'config-drive', 'GET', `/boot/v1/config-drive/${id}`, {
      authorization: `Bearer ${credential}`,
      'accept-encoding': 'gzip',
    });
    if (r.status !== 200) {
      this.world.counters.pxe.failed++;
      throw new PxeError(id, 'config-drive', r.status, r.body.toString().trim());
    }
    if (r.headers['content-encoding'] === 'gzip') r.body = await gunzip(r.body);
    this.world.counters.pxe.drives++;
    // The installed system will trade the drive's ticket from this node's address.
    const t = ticketOnDrive(r.body);
    if (t) this.ticketOwner.set(t, id);
    return r.body;
  }

  private deployHandlers(): DeployHandlers {
    return {
      bootTicket: async (id) => {
        const t = /(?:^|\s)bootorch_ticket=(\S+)/.exec(this.world.node(id)?.booted?.params ?? '')?.[1];
        if (!t) throw new PxeError(id, 'deploy', undefined, 'the boot script carried no ticket');
        return t;
      },
      exchange: (ticket) => this.exchange(ticket),
      heartbeat: (id, hb, credential) => this.heartbeat(id, hb, credential),
      configDrive: (id, credential) => this.configDrive(id, credential),
    };
  }

  /** The deployHeartbeat mutation, as deploy-agent.sh sends it. */
  private async heartbeat(id: string, hb: Heartbeat, credential: string): Promise<DeployRecord> {
    const u = new URL(this.gql);
    const res = await this.pool.request({
      origin: u.origin,
      path: u.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${credential}` },
      body: JSON.stringify({
        query:
          'mutation($id: ID!, $s: DeployHeartbeatState!, $r: DeployFailure, $m: String, $c: String) { deployHeartbeat(id: $id, state: $s, reason: $r, message: $m, checksum: $c) { __typename ... on DeployHeartbeatAccepted { imageUrl imageFormat imageChecksum rootDeviceSize rootDeviceName rootDeviceSerial hasConfigDrive } ... on ReportRefused { code message } } }',
        variables: { id, s: hb.state.toUpperCase(), r: hb.reason?.toUpperCase() ?? null, m: hb.message ?? null, c: hb.checksum ?? null },
      }),
    });
    const body = (await res.body.json()) as { data?: { deployHeartbeat?: HeartbeatAnswer }; errors?: Array<{ message: string }> };
    const a = body.data?.deployHeartbeat;
    if (a?.__typename !== 'DeployHeartbeatAccepted')
      throw new PxeError(
        id,
        'heartbeat',
        res.statusCode,
        a ? `${a.code}: ${a.message}` : JSON.stringify(body.errors ?? body).slice(0, 300),
      );
    const hints = Object.fromEntries(
      Object.entries({ size: a.rootDeviceSize, name: a.rootDeviceName, serial: a.rootDeviceSerial }).filter(([, v]) => v != null),
    );
    return {
      image: { url: a.imageUrl, format: String(a.imageFormat).toLowerCase() as DeployRecord['image']['format'], checksum: a.imageChecksum },
      ...(Object.keys(hints).length ? { root_device_hints: hints } : {}),
      ...(a.hasConfigDrive ? { config_drive: { meta_data: '' } } : {}),
    };
  }
}
