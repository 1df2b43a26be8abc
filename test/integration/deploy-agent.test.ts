/**
 * Disk deploys at the API door: a boot set's `deploy` is checked field by field and read back; the
 * deploy agent bootorch serves (src/api/boot/deploy-agent.sh) runs as a real shell process against
 * the real API with a node credential, looks itself up, downloads the image over HTTP, checks its
 * sha256 and writes it with dd to the disk its hints choose (a sysfs-shaped folder and a file standing
 * in for the block device); each failure it can meet reaches bootorch with its reason. The config
 * drive bootorch builds is written after the image (raw, and qcow2 converted by qemu-img) and read back
 * from the disk file with blkid and mtools. Needs dosfstools, mtools, util-linux's blkid and qemu-utils.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, errorOf, type Harness } from './api-harness.ts';
import { createNodeToken } from '../../src/auth/api-tokens.ts';
import { moveDeploys, setDeploys } from '../../src/db/deploys.ts';
import { issueTicket } from '../../src/db/boot-grants.ts';
import { newAttemptId, newTicket } from '../../src/auth/boot-tickets.ts';
import { bootRoutes } from '../../src/api/boot/routes.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';
import { haveTools } from '../helpers/tools.ts';
import { sealUserData } from '../../src/adapters/standalone/secrets.ts';

const IMAGE = randomBytes(300 * 1024);
const SUM = `sha256:${createHash('sha256').update(IMAGE).digest('hex')}`;
/** Seals config drives' user data (the API's BOOTORCH_SECRET_KEY). */
const KEY = randomBytes(32);
const AGENT = path.resolve(import.meta.dirname, '../../src/api/boot/deploy-agent.sh');
let h: Harness;
let images: Server;
let imageBase: string;

/** A whole-disk image with an MBR: one Linux partition at 1 MiB, 400 sectors long; random elsewhere. */
const MBR_IMAGE = (() => {
  const b = randomBytes(300 * 1024);
  b.fill(0, 446, 510);
  b.set([0x80, 0xfe, 0xff, 0xff, 0x83, 0xfe, 0xff, 0xff], 446);
  b.writeUInt32LE(2048, 446 + 8);
  b.writeUInt32LE(400, 446 + 12);
  b.set([0x55, 0xaa], 510);
  return b;
})();
const MBR_SUM = `sha256:${createHash('sha256').update(MBR_IMAGE).digest('hex')}`;
/** What the config drive tests drive for real: bootorch builds the drive, the test reads it back and makes a qcow2. */
const DRIVE_TOOLS = haveTools("test/integration/deploy-agent's config drive tests", ['mtype', 'blkid', 'qemu-img']);
/** MBR_IMAGE as qcow2 (made with qemu-img in beforeAll). */
let MBR_QCOW2 = Buffer.alloc(0);
const MBR_QCOW2_SUM = () => `sha256:${createHash('sha256').update(MBR_QCOW2).digest('hex')}`;

beforeAll(async () => {
  // The boot routes (the config drive's URL) need the harness's database, made by startHarness.
  const boot = express.Router();
  h = await startHarness({ bootRoutes: boot, secretKey: KEY });
  boot.use(bootRoutes({ db: h.db.db, secretKey: KEY }));
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bootorch-qcow2-'));
  writeFileSync(path.join(tmp, 'mbr.img'), MBR_IMAGE);
  if (DRIVE_TOOLS) {
    execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', path.join(tmp, 'mbr.img'), path.join(tmp, 'mbr.qcow2')]);
    MBR_QCOW2 = readFileSync(path.join(tmp, 'mbr.qcow2'));
  }
  rmSync(tmp, { recursive: true });
  images = createServer((req, res) => {
    if (req.url === '/disk.img') res.writeHead(200).end(IMAGE);
    else if (req.url === '/mbr.img') res.writeHead(200).end(MBR_IMAGE);
    else if (req.url === '/mbr.qcow2') res.writeHead(200).end(MBR_QCOW2);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
  imageBase = `http://127.0.0.1:${(images.address() as { port: number }).port}`;
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => images?.close(r));
});

const TEMPLATE = `mutation($n: String!, $i: SessionTemplateInput!) { putSessionTemplate(name: $n, input: $i) { template { bootSets { name deploy { image { url format checksum } rootDeviceHints { size name serial } configDrive { hasUserData userDataBytes metaData } } } } } }`;
const bootSet = (deploy: unknown) => ({
  name: 'compute',
  path: 's3://boot-images/x/manifest.json',
  type: 's3',
  nodeList: ['x3000c0s1b0n0'],
  deploy,
});

describe('a boot set asking for a disk deploy', () => {
  it('is stored and read back, its user data as a flag and a length only (write-only)', async () => {
    const deploy = {
      image: { url: `${imageBase}/disk.img`, format: 'QCOW2', checksum: SUM },
      rootDeviceHints: { size: 32, name: '/dev/vda', serial: 'S1' },
      configDrive: { userData: '#cloud-config\n', metaData: 'instance-id: x\n' },
    };
    const r = await h.ok(TEMPLATE, { n: 'deploy', i: { bootSets: [bootSet(deploy)] } });
    expect(r.putSessionTemplate.template.bootSets[0].deploy).toEqual({
      ...deploy,
      rootDeviceHints: { size: 32, name: 'vda', serial: 'S1' },
      configDrive: { hasUserData: true, userDataBytes: 14, metaData: 'instance-id: x\n' },
    });
  });

  it.each([
    ['a checksum that is not sha256', { url: 'http://x/i', checksum: 'md5:abc' }, undefined, 'bootSets.compute.deploy.image.checksum'],
    ['a URL with spaces', { url: 'http://x/a b', checksum: SUM }, undefined, 'bootSets.compute.deploy.image.url'],
    ['a size of 0 GiB', { url: 'http://x/i', checksum: SUM }, { size: 0 }, 'bootSets.compute.deploy.rootDeviceHints.size'],
    [
      'a disk name with a slash inside',
      { url: 'http://x/i', checksum: SUM },
      { name: 'a/b' },
      'bootSets.compute.deploy.rootDeviceHints.name',
    ],
  ])('refuses %s, naming the field', async (_what, image, hints, field) => {
    const r = await h.gql(TEMPLATE, { n: 'bad', i: { bootSets: [bootSet({ image, rootDeviceHints: hints })] } });
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });
});

/**
 * A node deploying in session s1, the one-time ticket its boot script would carry (a boot window of
 * purpose deploy), and a machine folder (sysfs + dev) for the agent.
 */
async function deployingNode(i: number, deploy: DeployRecord, disk: { name: string; gib: number; serial: string; writable?: boolean }) {
  const id = `x3000c0s${i}b0n0`;
  await h.db.pool.query(
    `insert into components (id, enabled, session, phase, last_action) values ($1, true, 's1', 'powering_on', 'powering_on')`,
    [id],
  );
  await setDeploys(h.db.db, { name: 's1', tenantKey: '' }, [{ id, deploy }]);
  const { ticket, hash } = newTicket();
  const now = new Date();
  await issueTicket(h.db.db, id, 'deploy', { hash, now, expiresAt: new Date(now.getTime() + 600_000), attempt: newAttemptId() });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-deploy-'));
  for (const d of ['sys/block/loop0', `sys/block/${disk.name}`, 'dev', 'tmp']) mkdirSync(path.join(dir, d), { recursive: true });
  writeFileSync(path.join(dir, 'sys/block/loop0/size'), '100000000\n');
  writeFileSync(path.join(dir, `sys/block/${disk.name}/size`), `${disk.gib * 2 * 1024 * 1024}\n`);
  writeFileSync(path.join(dir, `sys/block/${disk.name}/serial`), `${disk.serial}\n`);
  // A disk that cannot be written: a folder where the device node should be.
  if (disk.writable === false) mkdirSync(path.join(dir, 'dev', disk.name));
  else writeFileSync(path.join(dir, 'dev', disk.name), '');
  writeFileSync(
    path.join(dir, 'cmdline'),
    `console=ttyS0 bootorch_deploy=1 xname=${id} bootorch_url=${h.server.url} bootorch_ticket=${ticket}\n`,
  );
  return { id, dir };
}

/** Runs the agent with this PATH (default: the test's); `active`: as the installed system, its config drive in this file. */
function runAgent(dir: string, PATH = process.env.PATH, active?: { cidata: string }): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    execFile(
      'sh',
      active ? [AGENT, 'active'] : [AGENT],
      {
        env: {
          PATH,
          BOOTORCH_CMDLINE: path.join(dir, 'cmdline'),
          BOOTORCH_SYS_BLOCK: path.join(dir, 'sys/block'),
          BOOTORCH_DEV: path.join(dir, 'dev'),
          BOOTORCH_TMP: path.join(dir, 'tmp'),
          BOOTORCH_ETC: path.join(dir, 'etc'),
          ...(active ? { BOOTORCH_CIDATA: active.cidata } : {}),
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, output: `${stdout}${stderr}` }),
    ),
  );
}

const deployRow = async (id: string) => (await h.db.pool.query('select * from component_deploys where id = $1', [id])).rows[0];
const ok = (over: Partial<DeployRecord['image']> = {}, hints?: DeployRecord['root_device_hints']): DeployRecord => ({
  image: { url: `${imageBase}/disk.img`, format: 'raw', checksum: SUM, ...over },
  ...(hints ? { root_device_hints: hints } : {}),
});

describe('the deploy agent (shell) against the API', () => {
  it('looks itself up, downloads, verifies and writes the image to the disk its hints choose', async () => {
    const { id, dir } = await deployingNode(1, ok({}, { size: 32, serial: 'DISK-1' }), { name: 'vda', gib: 32, serial: 'DISK-1' });
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(0);
    expect(readFileSync(path.join(dir, 'dev/vda')).equals(IMAGE)).toBe(true);
    const d = await deployRow(id);
    expect(d.state).toBe('written');
    expect(d.message).toContain(`${IMAGE.length} bytes to`);
    expect(Object.keys(d.reached)).toEqual(expect.arrayContaining(['starting', 'downloading', 'verifying', 'writing', 'written']));
    const events = (await h.db.pool.query(`select data from component_events where component_id = $1 and kind = 'report'`, [id])).rows;
    expect(events.map((e) => e.data.deploy)).toEqual(['starting', 'downloading', 'verifying', 'writing', 'written']);
    expect(h.scheduler.committed).toContainEqual(['status']);
  });

  it.each([
    // Deploys are made when the test runs: the image server's address is not known before.
    ['checksum_mismatch', () => ok({ checksum: `sha256:${'1'.repeat(64)}` }), { name: 'vda', gib: 8, serial: 'A' }],
    ['image_unreachable', () => ok({ url: `${imageBase}/gone.img` }), { name: 'vda', gib: 8, serial: 'A' }],
    ['no_matching_disk', () => ok({}, { serial: 'NOT-THIS-ONE' }), { name: 'vda', gib: 8, serial: 'A' }],
    ['write_error', () => ok(), { name: 'vda', gib: 8, serial: 'A', writable: false }],
  ] as const)('reports %s and stops', async (reason, deploy, disk) => {
    const i = 2 + ['checksum_mismatch', 'image_unreachable', 'no_matching_disk', 'write_error'].indexOf(reason);
    const { id, dir } = await deployingNode(i, deploy(), disk);
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(1);
    const d = await deployRow(id);
    expect({ state: d.state, reason: d.reason }).toEqual({ state: 'failed', reason });
  });

  it('is refused once the node is no longer deploying, and a heartbeat needs its own node', async () => {
    const { id, dir } = await deployingNode(7, ok(), { name: 'vda', gib: 8, serial: 'A' });
    await h.db.pool.query(`update components set enabled = false where id = $1`, [id]);
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(3);
    expect(r.output).toContain('CONFLICT');
    const other = await createNodeToken(h.db.db, 'x3000c0s1b0n0', { ttlSeconds: 60 });
    const q = await h.gql(
      `mutation { deployHeartbeat(id: "${id}", state: STARTING) { __typename } }`,
      {},
      { authorization: `Bearer ${other.token}` },
    );
    expect(errorOf(q).code).toBe('FORBIDDEN');
    const missing = await h.gql(`mutation { deployHeartbeat(id: "${id}", state: FAILED) { __typename } }`);
    expect(errorOf(missing)).toMatchObject({ code: 'BAD_USER_INPUT', field: 'reason' });
  });
});

describe.skipIf(!DRIVE_TOOLS)('the config drive (cloud-init NoCloud, built by bootorch)', () => {
  const USER_DATA = '#cloud-config\nhostname: deployed-by-bootorch\nruncmd:\n  - echo config drive read\n';
  const withDrive = (url = `${imageBase}/mbr.img`, checksum = MBR_SUM, format: 'raw' | 'qcow2' = 'raw'): DeployRecord => ({
    image: { url, format, checksum },
    config_drive: { user_data_sealed: sealUserData(KEY, USER_DATA), meta_data: '' },
  });
  /** The disk file starts with MBR_IMAGE's bytes, but for the config drive's entry (MBR slot 2, bytes 462..477). */
  const holdsImage = (file: string) => {
    const head = Buffer.alloc(MBR_IMAGE.length);
    const fd = openSync(file, 'r');
    readSync(fd, head, 0, head.length, 0);
    closeSync(fd);
    MBR_IMAGE.copy(head, 462, 462, 478);
    return head.equals(MBR_IMAGE);
  };
  /** The MBR's four entries of a disk file. */
  const entries = (file: string) => {
    const mbr = Buffer.alloc(512);
    const fd = openSync(file, 'r');
    readSync(fd, mbr, 0, 512, 0);
    closeSync(fd);
    return [0, 1, 2, 3].map((i) => {
      const e = 446 + 16 * i;
      return { type: mbr[e + 4], start: mbr.readUInt32LE(e + 8), sectors: mbr.readUInt32LE(e + 12) };
    });
  };

  it('is written after the image, in a new partition at the end of the disk labelled cidata, holding the user-data', async () => {
    const { id, dir } = await deployingNode(11, withDrive(), { name: 'vda', gib: 1, serial: 'A' });
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(0);
    const disk = path.join(dir, 'dev/vda');
    expect(holdsImage(disk)).toBe(true);
    const gib = 2 ** 30 / 512;
    const [first, drive, ...rest] = entries(disk);
    expect(first).toEqual({ type: 0x83, start: 2048, sectors: 400 });
    expect(drive).toEqual({ type: 0x0c, start: gib - 2048, sectors: 128 });
    expect(rest.every((e) => e.type === 0)).toBe(true);
    // Nothing written past the drive, which ends in the disk's last MiB (the disk file grows as written).
    expect(statSync(disk).size).toBe((drive!.start + drive!.sectors) * 512);
    expect(2 ** 30 - statSync(disk).size).toBeLessThan(2 ** 20);
    const at = `${drive!.start * 512}`;
    expect(execFileSync('blkid', ['-p', '-O', at, '-s', 'LABEL', '-o', 'value', disk], { encoding: 'utf8' }).trim()).toBe('cidata');
    const mtools = { encoding: 'utf8' as const, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } };
    expect(execFileSync('mtype', ['-i', `${disk}@@${at}`, '::user-data'], mtools)).toBe(USER_DATA);
    expect(execFileSync('mtype', ['-i', `${disk}@@${at}`, '::meta-data'], mtools)).toBe(`instance-id: ${id}\nlocal-hostname: ${id}\n`);
    const d = await deployRow(id);
    expect(d.state).toBe('written');
    expect(d.message).toContain('bytes to');
    expect(d.message).toContain(' + config drive cidata on partition 2 at sector 2095104');
    const reports = (
      await h.db.pool.query(`select data from component_events where component_id = $1 and kind = 'report' order by id`, [id])
    ).rows;
    expect(reports.map((e) => e.data.deploy)).toEqual(['starting', 'downloading', 'verifying', 'writing', 'writing', 'written']);
  });

  it("carries the installed system's ticket: exchanged once bootorch switched to disk, for ACTIVE only", async () => {
    const { id, dir } = await deployingNode(16, withDrive(), { name: 'vda', gib: 1, serial: 'A' });
    const written = await runAgent(dir);
    expect(written.code, written.output).toBe(0);
    // The installed system reads its drive's partition (here copied out of the disk file).
    const disk = path.join(dir, 'dev/vda');
    const [, drive] = entries(disk);
    const part = Buffer.alloc(drive!.sectors * 512);
    const fd = openSync(disk, 'r');
    readSync(fd, part, 0, part.length, drive!.start * 512);
    closeSync(fd);
    const cidata = path.join(dir, 'cidata.img');
    writeFileSync(cidata, part);
    expect(
      execFileSync('mtype', ['-i', cidata, '::bootorch-ticket'], { encoding: 'utf8', env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } }),
    ).toMatch(/^btk_[A-Za-z0-9_-]{43}\n$/);
    await moveDeploys(h.db.db, [id], { state: 'booting_disk' }, ['written']);
    const r = await runAgent(dir, undefined, { cidata });
    expect(r.code, r.output).toBe(0);
    expect((await deployRow(id)).state).toBe('active');
    // Its next boot presents the spent ticket: refused, without an alarm (the deploy is active).
    const reboot = await runAgent(dir, undefined, { cidata });
    expect(reboot.code, reboot.output).toBe(2);
    const errors = (await h.db.pool.query(`select error from component_events where component_id = $1 and kind = 'error'`, [id])).rows;
    expect(errors).toEqual([]);
    const live = await h.db.pool.query(`select scope from api_tokens where subject = $1 and revoked_at is null and expires_at > now()`, [
      id,
    ]);
    expect(live.rows).toEqual([]);
  });

  it('goes after a qcow2 image too (converted to the disk by qemu-img), the partition table read from the disk', async () => {
    const { dir } = await deployingNode(15, withDrive(`${imageBase}/mbr.qcow2`, MBR_QCOW2_SUM(), 'qcow2'), {
      name: 'vda',
      gib: 1,
      serial: 'A',
    });
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(0);
    const disk = path.join(dir, 'dev/vda');
    expect(holdsImage(disk)).toBe(true);
    const [first, drive] = entries(disk);
    expect(first).toEqual({ type: 0x83, start: 2048, sectors: 400 });
    expect(drive).toEqual({ type: 0x0c, start: 2 ** 30 / 512 - 2048, sectors: 128 });
  });

  it('fails with write_error before the disk is written when a raw image has no MBR to add the partition to', async () => {
    const { id, dir } = await deployingNode(12, withDrive(`${imageBase}/disk.img`, SUM), { name: 'vda', gib: 1, serial: 'A' });
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(1);
    const d = await deployRow(id);
    expect({ state: d.state, reason: d.reason }).toEqual({ state: 'failed', reason: 'write_error' });
    expect(d.message).toContain('no MBR partition table');
    expect(statSync(path.join(dir, 'dev/vda')).size).toBe(0);
  });

  it('fails with write_error before the disk is written when bootorch cannot build it (user data sealed under another key), saying why', async () => {
    const { id, dir } = await deployingNode(
      13,
      { ...withDrive(), config_drive: { user_data_sealed: sealUserData(randomBytes(32), USER_DATA), meta_data: '' } },
      {
        name: 'vda',
        gib: 1,
        serial: 'A',
      },
    );
    const r = await runAgent(dir);
    expect(r.code, r.output).toBe(1);
    expect(statSync(path.join(dir, 'dev/vda')).size).toBe(0);
    const d = await deployRow(id);
    expect({ state: d.state, reason: d.reason }).toEqual({ state: 'failed', reason: 'write_error' });
    expect(d.message).toContain('config drive not given');
    const errors = (await h.db.pool.query(`select error, reason from component_events where component_id = $1 and kind = 'error'`, [id]))
      .rows;
    // bootorch's own word (the API could not build it), beside the agent's failure.
    expect(errors).toContainEqual({ reason: 'write_error', error: expect.stringContaining('does not open with BOOTORCH_SECRET_KEY') });
  });

  it("is served only to its own node's credential", async () => {
    const { id } = await deployingNode(14, withDrive(), { name: 'vda', gib: 1, serial: 'A' });
    const url = `${h.server.url.replace(/\/graphql$/, '')}/boot/v1/config-drive/${id}`;
    expect((await fetch(url)).status).toBe(401);
    const other = await createNodeToken(h.db.db, 'x3000c0s1b0n0', { ttlSeconds: 60 });
    expect((await fetch(url, { headers: { authorization: `Bearer ${other.token}` } })).status).toBe(403);
    const own = { authorization: `Bearer ${(await createNodeToken(h.db.db, id, { ttlSeconds: 60, revokeExisting: false })).token}` };
    // Not before its agent has looked itself up.
    expect((await fetch(url, { headers: own })).status).toBe(409);
    await h.ok(`mutation { deployHeartbeat(id: "${id}", state: STARTING) { __typename } }`, {}, own);
    const res = await fetch(url, { headers: own });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(64 * 1024);
  });
});
