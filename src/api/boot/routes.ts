/**
 * The boot-script endpoint of a standalone site (what BSS's /boot/v1/bootscript is for CSM), served
 * by the API under /boot/v1, unauthenticated as network boot must be (serve it on the provisioning
 * network only):
 * - GET ipxe: the DHCP boot file; chains to bootscript with the NIC's MAC.
 * - GET bootscript?mac=: the node's kernel, initrd and parameters as power-on last set them, plus
 *   what its reporter needs (xname, referral token, GraphQL URL and a fresh node credential that can
 *   report for this node only, expiring after BOOTORCH_BOOT_TOKEN_TTL).
 * - GET failed/<mac>/<stage>: iPXE's word that it could not load the kernel or initrd, or boot them;
 *   recorded as an error event on the node (why it will never report), answered with an empty script.
 * - GET reporter.sh: the node-side reporter (POSIX shell + busybox) to put in images.
 * - GET deploy-agent.sh: the disk deploy agent (POSIX shell + busybox) to put in deploy ramdisks.
 * A node whose disk deploy has been switched to disk (booting_disk, active) is told to boot its
 * first disk (`sanboot --drive 0x80`, as Ironic's iPXE script does; `exit` to the firmware's next
 * boot device if that fails), whatever its BMC's boot override did.
 * - GET config-drive/<xname>: the node's config drive (adapters/standalone/config-drive.ts), for its
 *   deploy agent while it runs; needs that node's credential (`Authorization: Bearer`), as the agent's
 *   heartbeats do. 401 without a valid node credential, 403 for another node's, 404 when its deploy
 *   has none, 409 when it is not being written, 503 (and an error event) when it cannot be built.
 * - GET files/...: the local artifact folder (BOOTORCH_BOOT_FILES), when configured.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { Db } from '../../db/client.ts';
import { componentSessionOf, nodeByMac } from '../../db/node-inventory.ts';
import { appendEvents } from '../../db/events.ts';
import { deployOf } from '../../db/deploys.ts';
import { createNodeToken, verifyApiToken } from '../../auth/api-tokens.ts';
import { isAuthFailure } from '../../auth/index.ts';
import { nodeConfigDrive } from '../../adapters/standalone/config-drive.ts';
import { checkComponentId } from '../../domain/components.ts';
import { localFile } from '../../adapters/standalone/images.ts';
import { normaliseMac } from '../../domain/node-registration.ts';

export interface BootRoutesOptions {
  db: Db;
  /** Base URL nodes reach the API at (default: from each request's Host header). */
  baseUrl?: string;
  filesDir?: string;
  /** Lifetime of the node credential in a boot script, seconds (default 3600). */
  tokenTtlSeconds?: number;
  /** Told about every request (method, path, status), e.g. the API's logger at debug. */
  onRequest?: (line: string) => void;
}

const STAGES: Record<string, string> = { kernel: 'load the kernel', initrd: 'load the initrd', boot: 'boot the loaded kernel' };

const REPORTER = readFileSync(new URL('./reporter.sh', import.meta.url), 'utf8');
const DEPLOY_AGENT = readFileSync(new URL('./deploy-agent.sh', import.meta.url), 'utf8');

/** A kernel or initrd reference as a URL the node can fetch: URLs as given, folder paths under files/. */
export function artifactUrl(base: string, ref: string): string {
  if (/^https?:\/\//.test(ref)) return ref;
  return `${base}/boot/v1/files/${ref.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/')}`;
}

export function bootRoutes(o: BootRoutesOptions): express.Router {
  const r = express.Router();
  if (o.onRequest) {
    const tell = o.onRequest;
    r.use((req, res, next) => {
      res.on('close', () => tell(`${req.method} ${req.originalUrl} ${res.statusCode}`));
      next();
    });
  }
  const base = (req: express.Request) => (o.baseUrl ?? `${req.protocol}://${req.get('host')}`).replace(/\/+$/, '');
  const ipxe = (res: express.Response, status: number, lines: string[]) =>
    res
      .status(status)
      .type('text/plain')
      .send(['#!ipxe', ...lines, ''].join('\n'));

  r.get('/ipxe', (req, res) => ipxe(res, 200, [`chain ${base(req)}/boot/v1/bootscript?mac=\${net0/mac}`]));

  r.get('/bootscript', async (req, res, next) => {
    try {
      const mac = normaliseMac(String(req.query.mac ?? ''));
      if (!mac) return ipxe(res, 400, ['echo bootorch: the query parameter mac is not a MAC address', 'exit 1']);
      const node = await nodeByMac(o.db, mac);
      if (!node) return ipxe(res, 404, [`echo bootorch: no node with MAC ${mac}`, 'exit 1']);
      if (!node.enabled) return ipxe(res, 200, [`echo bootorch: ${node.id} is disabled in the inventory`, 'exit 1']);
      const deploy = await deployOf(o.db, node.id);
      if (deploy?.state === 'booting_disk' || deploy?.state === 'active')
        return ipxe(res, 200, [`echo bootorch: ${node.id} boots from its disk`, 'sanboot --no-describe --drive 0x80 || exit 0']);
      if (!node.bootKernel)
        return ipxe(res, 200, [`echo bootorch: no boot parameters for ${node.id} (not booted by a session yet)`, 'exit 1']);
      const b = base(req);
      const { token } = await createNodeToken(o.db, node.id, { ttlSeconds: o.tokenTtlSeconds ?? 3600, revokeExisting: false });
      const params = [
        node.bootInitrd ? 'initrd=initrd' : '',
        node.bootParams,
        `xname=${node.id}`,
        `bss_referral_token=${node.bootToken}`,
        `bootorch_url=${b}/graphql`,
        `bootorch_token=${token}`,
      ]
        .filter(Boolean)
        .join(' ');
      const failed = (stage: string) => [`:${stage}_failed`, `imgfetch ${b}/boot/v1/failed/\${net0/mac}/${stage} ||`, 'goto failed'];
      return ipxe(res, 200, [
        `kernel ${artifactUrl(b, node.bootKernel)} ${params} || goto kernel_failed`,
        ...(node.bootInitrd ? [`initrd --name initrd ${artifactUrl(b, node.bootInitrd)} || goto initrd_failed`] : []),
        'boot || goto boot_failed',
        ...failed('kernel'),
        ...failed('initrd'),
        ...failed('boot'),
        ':failed',
        `echo bootorch: ${node.id} could not load its boot artifacts`,
        'exit 1',
      ]);
    } catch (e) {
      next(e);
    }
  });

  r.get('/failed/:mac/:stage', async (req, res, next) => {
    try {
      const mac = normaliseMac(req.params.mac);
      const stage = STAGES[req.params.stage];
      const node = mac && stage ? await nodeByMac(o.db, mac) : undefined;
      if (!node || !stage) return ipxe(res, 404, ['echo bootorch: unknown node or stage']);
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
          data: { stage: req.params.stage, bootToken: node.bootToken },
        },
      ]);
      return ipxe(res, 200, [`echo bootorch: recorded: ${error}`]);
    } catch (e) {
      next(e);
    }
  });

  r.get('/config-drive/:xname', async (req, res, next) => {
    const refuse = (status: number, message: string) => res.status(status).type('text/plain').send(`${message}\n`);
    try {
      const id = checkComponentId(req.params.xname);
      if (!id.ok) return refuse(404, `not a component id: ${req.params.xname}`);
      const bearer = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
      const p = bearer ? await verifyApiToken(o.db, bearer) : undefined;
      if (!p || isAuthFailure(p) || p.role !== 'node') return refuse(401, 'a node credential is required');
      if (p.node !== id.value) return refuse(403, `this credential is for ${p.node}, not ${id.value}`);
      const drive = await nodeConfigDrive(o.db, id.value);
      if (!drive.ok) return refuse(drive.status, drive.message);
      return res.type('application/octet-stream').send(drive.image);
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
  return r;
}
