/**
 * Standalone mode's API doors over real HTTP: node registration (sealed, never returned, field-named
 * errors, admin only), the boot-script endpoint an iPXE client calls by MAC (a ticket only inside the
 * node's boot window; everyone else the same answer), and the shell reporter run by a real busybox with
 * nothing else on its PATH, exchanging the boot script's one-time ticket for its credential.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, errorOf, type Harness } from './api-harness.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { StandaloneBootParams } from '../../src/adapters/standalone/boot-params.ts';
import { bootRoutes } from '../../src/api/boot/routes.ts';
import { open } from '../../src/adapters/standalone/secrets.ts';
import { recordBootArtifacts } from '../../src/db/boot-artifacts.ts';
import { haveTools } from '../helpers/tools.ts';

const key = randomBytes(32);
const REGISTER = `mutation($n: [NodeInput!]!) { registerNodes(nodes: $n) { xname mac groups bmc { driver address username hasPassword } } }`;
const node = (i: number, more: Record<string, unknown> = {}) => ({
  xname: `x3000c0s${i}b0n0`,
  mac: `52:54:00:00:01:0${i}`,
  groups: ['rack1'],
  bmc: { driver: 'IPMI', address: `10.0.0.${i}:623`, username: 'admin', password: `secret-${i}` },
  ...more,
});
const busybox = haveTools('the busybox reporter test of test/integration/standalone-api', ['busybox']);

let h: Harness;
let files: string;
beforeAll(async () => {
  files = mkdtempSync(path.join(os.tmpdir(), 'bootorch-files-'));
  writeFileSync(path.join(files, 'vmlinuz'), 'kernel bytes');
  h = await startHarness({ nodeRegistry: new NodeRegistry(key) });
  // The harness builds its server before we know the db; a second server carries the boot routes.
});
afterAll(async () => {
  await h?.close();
});

describe('node registration', () => {
  it('stores nodes with sealed passwords that the API never returns, and kicks discovery', async () => {
    const r = await h.gql(REGISTER, { n: [node(1), node(2, { mac: '52-54-00-00-01-02' })] });
    expect(r.errors).toBeUndefined();
    expect(JSON.stringify(r)).not.toContain('secret-');
    expect(r.data.registerNodes[1]).toEqual({
      xname: 'x3000c0s2b0n0',
      mac: '52:54:00:00:01:02',
      groups: ['rack1'],
      bmc: { driver: 'IPMI', address: '10.0.0.2:623', username: 'admin', hasPassword: true },
    });
    const { rows } = await h.db.pool.query(`select id, bmc_secret from node_inventory order by id`);
    expect(rows[0].bmc_secret).not.toContain('secret');
    expect(open(key, rows[0].id, rows[0].bmc_secret)).toBe('secret-1');
    expect(() => open(key, rows[1].id, rows[0].bmc_secret)).toThrow(/does not open/);
    expect(h.scheduler.committed).toContainEqual(['discovery']);
    const listed = await h.ok(`{ nodes { xname bmc { hasPassword } bootParameters { kernel } } }`);
    expect(listed.nodes).toEqual([
      { xname: 'x3000c0s1b0n0', bmc: { hasPassword: true }, bootParameters: null },
      { xname: 'x3000c0s2b0n0', bmc: { hasPassword: true }, bootParameters: null },
    ]);
  });

  it('re-registering without a password keeps the stored one', async () => {
    const {
      bmc: { password: _p, ...bmc },
      ...rest
    } = node(1);
    await h.ok(REGISTER, { n: [{ ...rest, bmc }] });
    const { rows } = await h.db.pool.query(`select bmc_secret from node_inventory where id = 'x3000c0s1b0n0'`);
    expect(open(key, 'x3000c0s1b0n0', rows[0].bmc_secret)).toBe('secret-1');
  });

  it.each([
    ['a bad MAC', [node(3, { mac: 'nope' })], 'nodes[0].mac'],
    ['a bad xname', [node(3, { xname: 'node3' })], 'nodes[0].xname'],
    ['an ipmi BMC without address', [node(3, { bmc: { driver: 'IPMI' } })], 'nodes[0].bmc.address'],
    [
      'a redfish address that is not a System URL',
      [node(3, { bmc: { driver: 'REDFISH', address: 'https://bmc/' } })],
      'nodes[0].bmc.address',
    ],
    ['a MAC given twice', [node(3), node(4, { mac: '52:54:00:00:01:03' })], 'nodes[1].mac'],
    ['a MAC another node holds', [node(3, { mac: '52:54:00:00:01:01' })], 'nodes[0].mac'],
  ])('refuses %s naming the field', async (_what, nodes, field) => {
    const r = await h.gql(REGISTER, { n: nodes });
    expect(errorOf(r)).toMatchObject({ code: 'BAD_USER_INPUT', field });
  });

  it('is for admins; viewers may read', async () => {
    const operator = await h.auth.token('operator');
    expect(errorOf(await h.gql(REGISTER, { n: [node(5)] }, h.auth.bearer(operator))).code).toBe('FORBIDDEN');
    const viewer = await h.auth.token('viewer');
    expect((await h.gql(`{ nodes { xname } }`, {}, h.auth.bearer(viewer))).errors).toBeUndefined();
  });

  it('answers FAILED_PRECONDITION on a site that is not standalone', async () => {
    const other = await startHarness();
    try {
      expect(errorOf(await other.gql(`{ nodes { xname } }`)).code).toBe('FAILED_PRECONDITION');
    } finally {
      await other.close();
    }
  });
});

describe('boot-script endpoint and shell reporter', () => {
  let base: string;
  let boot: Harness;
  beforeAll(async () => {
    // A server on the same database with the boot routes, as the API runs in standalone mode.
    const { startApiServer } = await import('../../src/api/server.ts');
    const server = await startApiServer({
      db: h.db.db,
      scheduler: h.scheduler,
      port: 0,
      host: '127.0.0.1',
      auth: h.auth.auth,
      bootRoutes: bootRoutes({ db: h.db.db, filesDir: files }),
    });
    boot = { ...h, server, close: () => server.close() };
    base = server.url.replace(/\/graphql$/, '');
  });
  afterAll(async () => {
    await boot?.close();
  });

  const get = async (p: string) => {
    const r = await fetch(`${base}${p}`);
    return { status: r.status, text: await r.text() };
  };

  const NOT_SCHEDULED = `#!ipxe\necho bootorch: no network boot is scheduled for this NIC; trying the local disk\nsanboot --no-describe --drive 0x80 || exit 0\n`;

  it('chains iPXE to the boot script by MAC; a MAC outside its boot window is answered as an unknown one', async () => {
    expect((await get('/boot/v1/ipxe')).text).toBe(`#!ipxe\nchain ${base}/boot/v1/bootscript?mac=\${net0/mac}\n`);
    expect(await get('/boot/v1/bootscript?mac=52%3A54%3A00%3A00%3A09%3A09')).toEqual({ status: 200, text: NOT_SCHEDULED });
    expect(await get('/boot/v1/bootscript?mac=zz')).toMatchObject({ status: 400 });
    expect(await get('/boot/v1/bootscript?mac=52:54:00:00:01:01')).toEqual({ status: 200, text: NOT_SCHEDULED });
  });

  it('inside the window serves kernel, initrd and parameters with the referral token and a one-time ticket, and the files folder', async () => {
    const bss = new StandaloneBootParams(h.db.db);
    const { token } = await bss.setBootParameters({
      hosts: ['x3000c0s1b0n0'],
      kernel: 'vmlinuz',
      initrd: 'https://images/initrd',
      params: 'console=ttyS0',
    });
    await expect(bss.setBootParameters({ hosts: ['x9c0s0b0n0'], kernel: 'k', initrd: '', params: '' })).rejects.toThrow(
      /not in the node inventory/,
    );
    const script = (await get('/boot/v1/bootscript?mac=52-54-00-00-01-01')).text;
    expect(script).toMatch(
      new RegExp(
        `kernel ${base}/boot/v1/files/vmlinuz initrd=initrd console=ttyS0 xname=x3000c0s1b0n0 bss_referral_token=${token} bootorch_url=${base}/graphql bootorch_ticket=btk_[A-Za-z0-9_-]{43} \\|\\|`,
      ),
    );
    expect(script).not.toContain('bto_');
    expect(script).toContain('initrd --name initrd https://images/initrd || goto initrd_failed');
    expect(await get('/boot/v1/files/vmlinuz')).toEqual({ status: 200, text: 'kernel bytes' });
    expect((await get('/boot/v1/files/..%2f..%2fetc%2fpasswd')).status).toBe(404);
    // iPXE's word that a load failed becomes an error event on the node, through this attempt's URL.
    const failedUrl = /imgfetch (\S+)\/kernel \|\|/.exec(script)![1]!;
    expect(failedUrl).toMatch(new RegExp(`^${base}/boot/v1/failed/[0-9a-f]{32}$`));
    expect((await get(`${failedUrl.slice(base.length)}/kernel`)).text).toBe(
      `#!ipxe\necho bootorch: recorded: iPXE could not load the kernel ${base}/boot/v1/files/vmlinuz\n`,
    );
    const { rows } = await h.db.pool.query(
      `select kind, error, reason, actor from component_events where component_id = 'x3000c0s1b0n0' order by id desc limit 1`,
    );
    expect(rows[0]).toEqual({
      kind: 'error',
      error: `iPXE could not load the kernel ${base}/boot/v1/files/vmlinuz`,
      reason: 'boot_never_reported',
      actor: 'node:x3000c0s1b0n0',
    });
    // Another stage name, or the URL by MAC as it once was: answered as outside, nothing recorded.
    expect(await get(`${failedUrl.slice(base.length)}/elsewhere`)).toEqual({ status: 200, text: NOT_SCHEDULED });
    expect(await get('/boot/v1/failed/52%3A54%3A00%3A00%3A01%3A01/kernel')).toEqual({ status: 200, text: NOT_SCHEDULED });
    expect((await h.db.pool.query(`select count(*)::int as n from component_events where component_id = 'x3000c0s1b0n0'`)).rows[0].n).toBe(
      1,
    );
    expect((await get('/boot/v1/reporter.sh')).text).toBe(readFileSync(new URL('../../src/api/boot/reporter.sh', import.meta.url), 'utf8'));
  });

  it.skipIf(!busybox)(
    "the reporter, with nothing but busybox, exchanges the boot script's ticket once and reports with its credential",
    async () => {
      await h.db.pool.query(`insert into components (id) values ('x3000c0s1b0n0'), ('x3000c0s2b0n0') on conflict do nothing`);
      const bss = new StandaloneBootParams(h.db.db);
      const artifacts = { kernel: 'vmlinuz', kernelParameters: 'console=ttyS0', initrd: 'https://images/initrd' };
      /** A new boot attempt (power-on's boot parameters) and the kernel command line its boot script gives. */
      const attempt = async () => {
        const { token } = await bss.setBootParameters({
          hosts: ['x3000c0s1b0n0'],
          kernel: 'vmlinuz',
          initrd: artifacts.initrd,
          params: 'console=ttyS0',
        });
        await recordBootArtifacts(h.db.db, token, artifacts);
        const script = (await get('/boot/v1/bootscript?mac=52:54:00:00:01:01')).text;
        return { token, cmdline: /^kernel \S+ (.*) \|\| goto kernel_failed$/m.exec(script)![1]! };
      };

      const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-node-'));
      const bin = path.join(dir, 'bin');
      execFileSync('mkdir', [bin]);
      const bb = execFileSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).trim();
      for (const applet of ['sh', 'wget', 'timeout', 'cat', 'head', 'sleep', 'echo', 'grep']) symlinkSync(bb, path.join(bin, applet));
      // Asynchronously: the API answering it runs in this process.
      const run = (line: string) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          writeFileSync(path.join(dir, 'cmdline'), line);
          execFile(
            path.join(bin, 'sh'),
            [path.resolve('src/api/boot/reporter.sh')],
            {
              env: {
                PATH: bin,
                BOOTORCH_CMDLINE: path.join(dir, 'cmdline'),
                BOOTORCH_REPORT_ATTEMPTS: '1',
                BOOTORCH_ETC: path.join(dir, 'etc'),
              },
              encoding: 'utf8',
              timeout: 20_000,
            },
            (err, stdout, stderr) => resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
          );
        });
      // The ticket's credential reports for its own node only.
      const first = await attempt();
      const other = await run(first.cmdline.replace('xname=x3000c0s1b0n0', 'xname=x3000c0s2b0n0'));
      expect(other.status).toBe(1);
      expect(other.stderr).toMatch(/not accepted: .*403 Forbidden/);
      // The ticket was taken: a second exchange is refused (and recorded), so no credential; the window is closed.
      const again = await run(first.cmdline);
      expect(again.status).toBe(2);
      expect(again.stderr).toMatch(/401 Unauthorized/);
      expect(await get('/boot/v1/bootscript?mac=52:54:00:00:01:01')).toEqual({ status: 200, text: NOT_SCHEDULED });
      // The next boot attempt has a ticket of its own.
      const next = await attempt();
      const r = await run(next.cmdline);
      expect(r.stdout + r.stderr).toContain('bootorch-report: x3000c0s1b0n0 reported (attempt 1)');
      expect(r.status).toBe(0);
      const { rows } = await h.db.pool.query(`select actual_bss_token, actual_kernel from components where id = 'x3000c0s1b0n0'`);
      expect(rows[0]).toEqual({ actual_bss_token: next.token, actual_kernel: 'vmlinuz' });
      expect((await run('xname=x3000c0s1b0n0')).status).toBe(2);
    },
  );
});
