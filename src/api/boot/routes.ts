/**
 * The boot-script endpoint of a standalone site (what BSS's /boot/v1/bootscript is for CSM), served
 * by the API under /boot/v1, without credentials as network boot must be (serve it on the
 * provisioning network only). A MAC address is not a credential: a node gets something only while
 * bootorch expects it to boot (Ironic's agent token, issued in a deploy wait only):
 * - GET ipxe: the DHCP boot file; chains to bootscript with the NIC's MAC.
 * - GET bootscript?mac=: inside the node's boot window (a power-on bootorch made opened it,
 *   db/boot-grants.ts) and before its ticket was exchanged: its kernel, initrd and parameters as
 *   power-on set them, plus xname, referral token, GraphQL URL and a one-time ticket
 *   (`bootorch_ticket=`, short-lived, bound to the node and this boot attempt; a later fetch in the
 *   window replaces an unexchanged one, so iPXE may retry). Everyone else (unknown MAC, disabled
 *   node, outside the window, deployed to its disk) gets one and the same answer: no network boot is
 *   scheduled, try the first disk (`sanboot --drive 0x80`, as Ironic's iPXE script does; `exit` to the
 *   firmware's next boot device if that fails). A malformed MAC is 400.
 * - POST exchange (`Authorization: Bearer <ticket>`): the node's first call trades the ticket for a
 *   node credential of the ticket's scope (exchange.ts), answered as text/plain, one line. 401 for any
 *   ticket that is not good; a second exchange of a ticket is also recorded on the node's timeline.
 * - GET failed/<attempt>/<stage>: iPXE's word that it could not load the kernel or initrd, or boot
 *   them; recorded as an error event on the node only for an open attempt, else answered as outside.
 * - GET config-drive/<xname>: the node's config drive (adapters/standalone/config-drive.ts), for its
 *   deploy agent (a `deploy` or provisioned node credential for that node) while it writes; it holds
 *   the installed system's `disk` ticket. 401 without a valid node credential, 403 for another node's
 *   or another scope, 409 when it is not being written, 503 (and an error event) when it cannot be built.
 *   Gzip-encoded (Content-Encoding) when the request accepts gzip.
 * - GET reporter.sh, deploy-agent.sh: the node-side scripts (POSIX shell + busybox) to put in images.
 * - GET files/...: the local artifact folder (BOOTORCH_BOOT_FILES), when configured.
 * Every request passes limits.ts first: per source and overall rate limits (429, Retry-After), no bodies.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import express from 'express';
import type { Db } from '../../db/client.ts';
import { componentSessionOf, listNodes } from '../../db/node-inventory.ts';
import { appendEvents } from '../../db/events.ts';
import { mintBootTicket, openAttempt } from '../../db/boot-grants.ts';
import { verifyApiToken } from '../../auth/api-tokens.ts';
import { isAuthFailure } from '../../auth/index.ts';
import type { BucketShape } from '../../auth/rate-limit.ts';
import { nodeConfigDrive } from '../../adapters/standalone/config-drive.ts';
import { checkComponentId } from '../../domain/components.ts';
import { localFile } from '../../adapters/standalone/images.ts';
import { normaliseMac } from '../../domain/node-registration.ts';
import { exchangeTicket } from './exchange.ts';
import { ATTEMPT_RE, newTicket } from '../../auth/boot-tickets.ts';
import { bootDoor } from './limits.ts';

export interface BootRoutesOptions {
  db: Db;
  /** Base URL nodes reach the API at (default: from each request's Host header). */
  baseUrl?: string;
  filesDir?: string;
  /** Lifetime of a credential exchanged for a ticket, and of a config drive's disk ticket, seconds (default 3600). */
  tokenTtlSeconds?: number;
  /** Lifetime of a boot script's ticket, seconds (default 600). */
  ticketTtlSeconds?: number;
  /** Rate limits per source address and overall (limits.ts has the defaults). */
  perSource?: BucketShape;
  total?: BucketShape;
  /** Express's `trust proxy` value, for the source address of the rate limit (default: the socket's). */
  trustProxy?: boolean | number | string | string[];
  /** Told about every request (method, path, status), e.g. the API's logger at debug. */
  onRequest?: (line: string) => void;
  /** Told about a ticket presented again, e.g. the API's logger at warn. */
  warn?: (message: string, data: Record<string, unknown>) => void;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
  /** BOOTORCH_SECRET_KEY: opens config drives' sealed user data (adapters/standalone/config-drive.ts). */
  secretKey?: Buffer;
}

const gzip = promisify(zlib.gzip);

const STAGES: Record<string, string> = { kernel: 'load the kernel', initrd: 'load the initrd', boot: 'boot the loaded kernel' };

/** The answer for every node bootorch does not expect to boot now, known or not: the same bytes. */
const NOT_SCHEDULED = [
  'echo bootorch: no network boot is scheduled for this NIC; trying the local disk',
  'sanboot --no-describe --drive 0x80 || exit 0',
];

const REPORTER = readFileSync(new URL('./reporter.sh', import.meta.url), 'utf8');
const DEPLOY_AGENT = readFileSync(new URL('./deploy-agent.sh', import.meta.url), 'utf8');

/** A kernel or initrd reference as a URL the node can fetch: URLs as given, folder paths under files/. */
export function artifactUrl(base: string, ref: string): string {
  if (/^https?:\/\//.test(ref)) return ref;
  return `${base}/boot/v1/files/${ref.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The routes, and their door (limits.ts) for the API's listener to call on the bare request before
 * anything else (`door(req, res)`: true when it answered). A request that did not pass the door there
 * (the router mounted on its own, as tests do) passes it inside the router: each request once.
 */
export type BootRouter = express.Router & { door: (req: http.IncomingMessage, res: http.ServerResponse) => boolean };

export function bootRoutes(o: BootRoutesOptions): BootRouter {
  const r = express.Router();
  const now = o.now ?? (() => new Date());
  const tell = o.onRequest;
  const isStatic = (path: string) => path.startsWith('/files/') || path.endsWith('.sh');
  const door = bootDoor({ perSource: o.perSource, total: o.total, trustProxy: o.trustProxy, now: o.now }, (path) => !isStatic(path));
  const passed = new WeakSet<http.IncomingMessage>();
  const front = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    const url = req.url ?? '';
    if (!url.startsWith('/boot/v1/')) return false;
    passed.add(req);
    const q = url.indexOf('?');
    const refused = door(req, res, url.slice('/boot/v1'.length, q < 0 ? undefined : q));
    if (refused && tell) res.on('close', () => tell(`${req.method} ${url} ${res.statusCode}`));
    return refused;
  };
  r.use((req, res, next) => {
    if (tell) res.on('close', () => tell(`${req.method} ${req.originalUrl} ${res.statusCode}`));
    if (passed.has(req) || !door(req, res, req.path)) next();
  });
  const base = (req: express.Request) => (o.baseUrl ?? `${req.protocol}://${req.get('host')}`).replace(/\/+$/, '');
  const ipxe = (res: express.Response, status: number, lines: string[]) =>
    res
      .status(status)
      .type('text/plain')
      .send(['#!ipxe', ...lines, ''].join('\n'));
  const text = (res: express.Response, status: number, message: string) => res.status(status).type('text/plain').send(`${message}\n`);

  r.get('/ipxe', (req, res) => ipxe(res, 200, [`chain ${base(req)}/boot/v1/bootscript?mac=\${net0/mac}`]));

  r.get('/bootscript', async (req, res, next) => {
    try {
      const mac = normaliseMac(String(req.query.mac ?? ''));
      if (!mac) return ipxe(res, 400, ['echo bootorch: the query parameter mac is not a MAC address', 'exit 1']);
      // One statement whatever the MAC: a ticket is minted only inside the node's open window.
      const { ticket, hash } = newTicket();
      const at = now();
      const node = await mintBootTicket(o.db, mac, {
        hash,
        expiresAt: new Date(at.getTime() + (o.ticketTtlSeconds ?? 600) * 1000),
        now: at,
      });
      if (!node) return ipxe(res, 200, NOT_SCHEDULED);
      const b = base(req);
      const params = [
        node.bootInitrd ? 'initrd=initrd' : '',
        node.bootParams,
        `xname=${node.node}`,
        `bss_referral_token=${node.bootToken}`,
        `bootorch_url=${b}/graphql`,
        `bootorch_ticket=${ticket}`,
      ]
        .filter(Boolean)
        .join(' ');
      const failed = (stage: string) => [`:${stage}_failed`, `imgfetch ${b}/boot/v1/failed/${node.attempt}/${stage} ||`, 'goto failed'];
      return ipxe(res, 200, [
        `kernel ${artifactUrl(b, node.bootKernel)} ${params} || goto kernel_failed`,
        ...(node.bootInitrd ? [`initrd --name initrd ${artifactUrl(b, node.bootInitrd)} || goto initrd_failed`] : []),
        'boot || goto boot_failed',
        ...failed('kernel'),
        ...failed('initrd'),
        ...failed('boot'),
        ':failed',
        `echo bootorch: ${node.node} could not load its boot artifacts`,
        'exit 1',
      ]);
    } catch (e) {
      next(e);
    }
  });

  r.post('/exchange', async (req, res, next) => {
    try {
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
      const x = await exchangeTicket(o.db, bearer, { ttlSeconds: o.tokenTtlSeconds ?? 3600, now, warn: o.warn });
      if (!x.ok) return text(res, x.status, x.message);
      res.set('cache-control', 'no-store');
      return text(res, 200, x.token);
    } catch (e) {
      next(e);
    }
  });

  r.get('/failed/:attempt/:stage', async (req, res, next) => {
    try {
      const stage = STAGES[req.params.stage];
      const attempt = ATTEMPT_RE.test(req.params.attempt) ? await openAttempt(o.db, req.params.attempt, now()) : undefined;
      const [node] = stage && attempt ? await listNodes(o.db, [attempt.node]) : [];
      if (!node || !stage) return ipxe(res, 200, NOT_SCHEDULED);
      const what = req.params.stage === 'kernel' ? node.bootKernel : req.params.stage === 'initrd' ? node.bootInitrd : '';
      const error = `iPXE could not ${stage}${what ? ` ${artifactUrl(base(req), what)}` : ''}`;
      await appendEvents(o.db, [
        {
          componentId: node.id,
          ...(await componentSessionOf(o.db, node.id)),
          kind: 'error',
          actor: `node:${node.id}`,
          error,
          reason: 'boot_never_reported',
          data: { stage: req.params.stage, bootToken: node.bootToken, attempt: attempt!.attempt },
        },
      ]);
      return ipxe(res, 200, [`echo bootorch: recorded: ${error}`]);
    } catch (e) {
      next(e);
    }
  });

  r.get('/config-drive/:xname', async (req, res, next) => {
    try {
      const id = checkComponentId(req.params.xname);
      if (!id.ok) return text(res, 404, `not a component id: ${req.params.xname}`);
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
      const p = bearer ? await verifyApiToken(o.db, bearer) : undefined;
      if (!p || isAuthFailure(p) || p.role !== 'node') return text(res, 401, 'a node credential is required');
      if (p.node !== id.value) return text(res, 403, `this credential is for ${p.node}, not ${id.value}`);
      if (p.scope && p.scope !== 'deploy') return text(res, 403, `a node credential for ${p.scope} may not read the config drive`);
      const drive = await nodeConfigDrive(o.db, id.value, { diskTicketTtlSeconds: o.tokenTtlSeconds ?? 3600, now, secretKey: o.secretKey });
      if (!drive.ok) return text(res, drive.status, drive.message);
      // 64 KiB or more, mostly zeros: gzip on the wire for a client that takes it (curl --compressed),
      // a few KiB per node in a storm; compressed on libuv's threads, not the event loop.
      // No ETag (res.send would hash every drive): each is built once, with its own ticket.
      const gz = req.acceptsEncodings('gzip', 'identity') === 'gzip';
      const body = gz ? await gzip(drive.image, { level: 1 }) : drive.image;
      res.set({
        'cache-control': 'no-store',
        'content-type': 'application/octet-stream',
        'content-length': String(body.length),
        vary: 'accept-encoding',
      });
      if (gz) res.set('content-encoding', 'gzip');
      return res.end(body);
    } catch (e) {
      next(e);
    }
  });

  r.get('/reporter.sh', (_req, res) => res.type('text/x-shellscript').send(REPORTER));
  r.get('/deploy-agent.sh', (_req, res) => res.type('text/x-shellscript').send(DEPLOY_AGENT));

  if (o.filesDir) {
    const dir = o.filesDir;
    r.get('/files/{*path}', (req, res) => {
      const rel = ([] as string[]).concat((req.params as { path?: string | string[] }).path ?? []).join('/');
      const file = localFile(dir, rel);
      if (!file) return res.status(404).type('text/plain').send('not found\n');
      // Relative to the folder, so only the part under it is checked for dot files (the folder may be under .cache).
      res.sendFile(path.relative(dir, file), { root: path.resolve(dir), dotfiles: 'deny' }, (err) => {
        if (err && !res.headersSent) res.status(404).type('text/plain').send('not found\n');
      });
    });
  }
  return Object.assign(r, { door: front });
}
