/**
 * Real machines, real firmware (issue 19): three QEMU VMs, each behind its own OpenIPMI ipmi_sim,
 * registered in bootorch's own inventory and driven by a bootorch session through the standalone
 * adapters: power over IPMI with the real ipmitool (`-I lanplus -C 3`), network boot through iPXE
 * from bootorch's boot-script endpoint, reports by the shell reporter in the initrd. One VM's boot
 * set points at a kernel that does not exist: it fails with a classified reason, and on the way the
 * soft-off bootorch sends it while it sits in firmware is ignored and escalated to a forced off.
 * Guests use slirp; every server listens on 127.0.0.1.
 * Rescue (docs/rescue.md): one booted VM is rescued into a rescue image (its serial shows the rescue
 * init and its command line), its spent boot ticket is refused when presented again, and an unrescue
 * boots it back into its desired image.
 * Disk deploys (issue 21): two more VMs with an empty virtio disk; one is deployed with a bootable
 * disk image built by the test (syslinux + the same kernel and initrd, whose init reports as the
 * installed system), given as qcow2 (the ramdisk's qemu-img writes it), boots from its disk and
 * reports; the other is given a wrong checksum (raw), fails
 * with checksum_mismatch and is left powered off. The deployed one also gets a config drive (NoCloud,
 * built by bootorch), read back on the host from its disk file: a partition labelled cidata holding the
 * user-data given. The timings per phase are printed.
 *
 * Behind BOOTORCH_VM_TESTS=1 (needs qemu-system-x86, ipxe-qemu, openipmi, ipmitool, busybox-static,
 * syslinux, syslinux-common, mtools, dosfstools, qemu-utils and the kernel package scripts/vm-assets.sh downloads). BOOTORCH_VM_ACCEL=kvm uses KVM (default TCG).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, truncateSync, openSync, readSync, closeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { testAuth, type TestAuth } from '../helpers/auth.ts';
import { ROOT } from '../helpers/processes.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { bootRoutes } from '../../src/api/boot/routes.ts';
import { startEngine, type EngineHandle } from '../../src/engine/runtime.ts';
import { createOperators } from '../../src/operators/index.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { createStandaloneAdapters, type StandaloneAdapters } from '../../src/adapters/standalone/factory.ts';
import { EVENTS_CHANNEL } from '../../src/db/events.ts';
import { Machines, BMC_USER, BMC_PASSWORD } from './machines.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { NodeDiscovery } from '../../src/adapters/standalone/discovery.ts';
import { buildDiskImage } from './disk-image.ts';
import { ConsoleCapture } from '../../src/consoles/capture.ts';
import { waitFor as waitOn } from '../helpers/wait.ts';

const ENABLED = process.env.BOOTORCH_VM_TESTS === '1';
if (!ENABLED)
  console.info("test/vm skipped: set BOOTORCH_VM_TESTS=1 (and install the packages in scripts/vm-assets.sh's header) to boot real VMs");

const NODES = [
  { name: 'vm1', xname: 'x3000c0s1b0n0' },
  { name: 'vm2', xname: 'x3000c0s2b0n0' },
  { name: 'vm3', xname: 'x3000c0s3b0n0' },
];
const BROKEN = 'x3000c0s3b0n0';
const GOOD = ['x3000c0s1b0n0', 'x3000c0s2b0n0'];
/** Disk deploys: each VM has an empty 64 MiB virtio disk. */
const DEPLOY_NODES = [
  { name: 'vm4', xname: 'x3000c0s4b0n0' },
  { name: 'vm5', xname: 'x3000c0s5b0n0' },
];
const [DEPLOYED, BAD_CHECKSUM] = DEPLOY_NODES.map((n) => n.xname) as [string, string];

describe.skipIf(!ENABLED)('standalone bootorch on real VMs (QEMU + iPXE + ipmi_sim + ipmitool)', () => {
  let db: TestDb;
  let auth: TestAuth;
  let api: ApiServer;
  let engine: EngineHandle;
  let adapters: StandaloneAdapters;
  let machines: Machines;
  let listener: pg.Client;
  let consoles: ConsoleCapture;
  const waiters = new Set<() => void>();
  const timings: string[] = [];
  const requests: string[] = [];
  let assets: string;
  let files: string;

  const gql = async (query: string, variables: Record<string, unknown> = {}) => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth.bearer(auth.adminToken) },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: any; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(`GraphQL: ${JSON.stringify(body.errors)}`);
    return body.data;
  };

  /** Re-checks on every component event and every 250 ms, until the deadline. */
  const waitFor = (cond: () => Promise<boolean>, what: string, timeoutMs: number) =>
    waitOn(cond, what, timeoutMs, undefined, 250, waiters).then(() => undefined);

  const component = async (id: string) => (await db.pool.query('select * from components where id = $1', [id])).rows[0];
  const events = async (id: string, session: string) =>
    (await db.pool.query('select * from component_events where component_id = $1 and session = $2 order by id', [id, session])).rows;

  const runSession = async (name: string, operation: string, limit: string, timeoutMs: number) => {
    await gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name } } }`, {
      i: { name, operation, templateName: 'vms', limit },
    });
    await waitFor(
      async () => (await db.pool.query('select status from sessions where name = $1', [name])).rows[0]?.status === 'complete',
      `session ${name} complete`,
      timeoutMs,
    );
  };

  /**
   * Per node, seconds from the power-on action (the session's event) and from QEMU's start (the
   * machine's start script, run by ipmi_sim on `chassis power on`) to the node's report.
   */
  const bootTimes = async (session: string, ids: string[]) => {
    const out: Record<string, { action: number; qemu: number }> = {};
    for (const id of ids) {
      const ev = await events(id, session);
      const on = ev.filter((e) => e.kind === 'action' && e.action === 'powering_on').at(-1);
      const report = ev.filter((e) => e.kind === 'report').at(-1);
      const start = machines.nodes
        .find((m) => m.xname === id)!
        .powerOns()
        .at(-1);
      if (on && report && start) {
        out[id] = { action: (report.at.getTime() - on.at.getTime()) / 1000, qemu: (report.at.getTime() - start) / 1000 };
      }
    }
    return out;
  };

  beforeAll(async () => {
    assets = execFileSync(path.join(ROOT, 'scripts/vm-assets.sh'), { encoding: 'utf8' }).trim().split('\n').at(-1)!;
    db = await freshDb();
    await db.pool.query('insert into options (id, data) values (1, $1)', [
      JSON.stringify({
        polling_frequency: 2,
        transit_polling_frequency: 0.5,
        discovery_frequency: 1,
        max_power_off_wait_time: 5,
        max_power_on_wait_time: 30,
        max_boot_wait_time: 45,
        default_retry_policy: 1,
        cleanup_completed_session_ttl: '0',
      }),
    ]);
    // The artifact folder bootorch serves: the VM assets, a manifest for them, and one whose kernel is missing.
    files = path.join(assets, 'served');
    mkdirSync(path.join(files, 'broken'), { recursive: true });
    const manifest = (kernel: string) =>
      JSON.stringify({
        artifacts: [
          { type: 'application/vnd.cray.image.kernel', link: { path: kernel } },
          { type: 'application/vnd.cray.image.initrd', link: { path: 'initrd.gz' } },
        ],
      });
    writeFileSync(path.join(files, 'manifest.json'), manifest('vmlinuz'));
    writeFileSync(path.join(files, 'broken', 'manifest.json'), manifest('no-such-vmlinuz'));
    for (const f of ['vmlinuz', 'initrd.gz']) writeFileSync(path.join(files, f), readFileSync(path.join(assets, f)));
    // The rescue image: the same kernel and initrd under other names, with boot parameters of its own.
    mkdirSync(path.join(files, 'rescue'), { recursive: true });
    for (const f of ['vmlinuz', 'initrd.gz']) writeFileSync(path.join(files, 'rescue', f), readFileSync(path.join(assets, f)));
    writeFileSync(path.join(files, 'rescue', 'params'), 'console=ttyS0 quiet');
    writeFileSync(
      path.join(files, 'rescue', 'manifest.json'),
      JSON.stringify({
        artifacts: [
          { type: 'application/vnd.cray.image.kernel', link: { path: 'rescue/vmlinuz' } },
          { type: 'application/vnd.cray.image.initrd', link: { path: 'rescue/initrd.gz' } },
          { type: 'application/vnd.cray.image.parameters.boot', link: { path: 'rescue/params' } },
        ],
      }),
    );

    const secretKey = randomBytes(32);
    const log = pino({ level: process.env.TEST_LOG ?? 'silent' });
    adapters = createStandaloneAdapters({ db: db.db, secretKey, filesDir: files, bmcTimeoutMs: 15_000 });
    engine = await startEngine({ url: db.url, db: db.db, adapters, operators: createOperators(), log });
    auth = await testAuth(db.db);
    api = await startApiServer({
      db: db.db,
      scheduler: engine.scheduler,
      port: 0,
      host: '127.0.0.1',
      auth: auth.auth,
      adapters,
      images: adapters.images,
      reports: createReportBatcher(db.db, engine.scheduler),
      nodeRegistry: new NodeRegistry(secretKey, new NodeDiscovery({ secretKey, timeoutMs: 15_000 })),
      secretKey,
      bootRoutes: bootRoutes({ db: db.db, filesDir: files, secretKey, onRequest: (l) => requests.push(`${Date.now()} ${l}`) }),
    });
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    await listener.query(`listen ${EVENTS_CHANNEL}`);
    listener.on('notification', () => {
      for (const w of [...waiters]) w();
    });

    const port = new URL(api.url).port;
    machines = new Machines({
      assets,
      bootfile: `http://10.0.2.2:${port}/boot/v1/ipxe`,
      accel: process.env.BOOTORCH_VM_ACCEL === 'kvm' ? 'kvm' : 'tcg',
    });
    for (const [i, n] of NODES.entries()) await machines.add(n.name, n.xname, i + 1);
    for (const [i, n] of DEPLOY_NODES.entries()) {
      const disk = path.join(machines.root, `${n.name}-disk.raw`);
      writeFileSync(disk, '');
      truncateSync(disk, 64 * 2 ** 20);
      await machines.add(n.name, n.xname, NODES.length + i + 1, { disk });
    }
    await machines.ready();

    // Discovered first (a dry run over IPMI: ipmitool reads each BMC's FRU), then registered through
    // the API as an operator would (BMC passwords sealed, never returned).
    const found = (
      await gql(
        `mutation($i: DiscoverNodesInput!) { discoverNodes(input: $i) { asked nodes { address xname action hardware { macs model source } } failures { address message } } }`,
        {
          i: {
            driver: 'IPMI',
            targets: machines.nodes.map((m) => m.bmcAddress),
            username: BMC_USER,
            password: BMC_PASSWORD,
            xnamePattern: 'x3000c0s{n}b0n0',
            dryRun: true,
          },
        },
      )
    ).discoverNodes;
    expect(found.failures).toEqual([]);
    expect(found.nodes.map((n: any) => [n.address, n.action, n.hardware.macs[0], n.hardware.source])).toEqual(
      machines.nodes.map((m) => [m.bmcAddress, 'CREATE', m.mac, 'ipmi']),
    );
    // Then registered by discovery itself, one BMC at a time so each VM gets its own xname and group
    // (a new node's name comes from xnamePattern; one xname names one BMC): its MAC from the FRU, its
    // BMC login sealed, never returned.
    for (const m of machines.nodes) {
      const d = (
        await gql(
          `mutation($i: DiscoverNodesInput!) { discoverNodes(input: $i) { nodes { xname action } failures { address message } } }`,
          {
            i: {
              driver: 'IPMI',
              targets: [m.bmcAddress],
              username: BMC_USER,
              password: BMC_PASSWORD,
              xnamePattern: m.xname,
              groups: DEPLOY_NODES.some((d) => d.xname === m.xname) ? ['deploy'] : ['vms'],
            },
          },
        )
      ).discoverNodes;
      expect(d.failures).toEqual([]);
      expect(d.nodes).toEqual([{ xname: m.xname, action: 'CREATE' }]);
    }
    const registered = (await gql(`{ nodes { xname mac groups bmc { driver address hasPassword } } }`)).nodes;
    expect(registered.map((n: any) => [n.xname, n.mac, n.bmc])).toEqual(
      machines.nodes.map((m) => [m.xname, m.mac, { driver: 'IPMI', address: m.bmcAddress, hasPassword: true }]),
    );
    // Re-inspected with their stored logins (opened from the sealed passwords): the same hardware
    // discovery stored, so nothing changes.
    const inspected = (
      await gql(`mutation { inspectNodes { nodes { xname action changes { field } hardware { serialNumber } } failures { message } } }`)
    ).inspectNodes;
    expect(inspected.failures).toEqual([]);
    for (const n of inspected.nodes) expect([n.xname, n.action, n.changes]).toEqual([n.xname, 'UNCHANGED', []]);
    expect(inspected.nodes.map((n: any) => n.hardware.serialNumber)).toEqual(machines.nodes.map((_, i) => `VM${i + 1}`));
    await gql(`mutation($i: SessionTemplateInput!) { putSessionTemplate(name: "vms", input: $i) { template { name } } }`, {
      i: {
        enableCfs: false,
        bootSets: [
          {
            name: 'good',
            type: 's3',
            path: 'manifest.json',
            kernelParameters: 'console=ttyS0 quiet',
            nodeList: GOOD,
            rescueImage: 'rescue/manifest.json',
          },
          {
            name: 'broken',
            type: 's3',
            path: 'broken/manifest.json',
            kernelParameters: 'console=ttyS0 quiet',
            nodeList: [BROKEN],
            rescueImage: 'rescue/manifest.json',
          },
        ],
      },
    });
    // Discovery makes the registered nodes components.
    await waitFor(
      async () => (await db.pool.query('select count(*)::int as n from components')).rows[0].n === NODES.length + DEPLOY_NODES.length,
      'components discovered',
      15_000,
    );
    // The worker's console capture, as a standalone worker runs it: one `ipmitool sol activate` per
    // node; ipmi_sim then connects each node's serial line (the harness's UART, which QEMU's serial
    // port is on), so the guests' boot messages arrive over real IPMI Serial-over-LAN.
    consoles = new ConsoleCapture(db.db, { secretKey, log, roundMs: 250 });
    consoles.start();
    await waitFor(async () => machines.nodes.every((m) => m.solConnected()), 'SOL active on every BMC', 60_000);
  }, 180_000);

  afterAll(async () => {
    await consoles?.stop();
    await machines?.stop();
    if (timings.length) console.info(`VM timings:\n  ${timings.join('\n  ')}`);
    if (process.env.BOOTORCH_VM_DEBUG) console.info(`boot endpoint requests:\n  ${requests.join('\n  ')}\nVM folders: ${machines?.root}`);
    await listener?.end();
    await api?.close();
    await engine?.stop();
    await adapters?.power.idle();
    await adapters?.config.close();
    await db?.drop();
  }, 60_000);

  it('boots all three from off; the one with a broken kernel URL fails as boot_never_reported, its ignored soft-off escalated', async () => {
    for (const m of machines.nodes) expect(machines.ipmitool(m, 'chassis', 'power', 'status')).toMatch(/is off/);
    const t0 = Date.now();
    await runSession('boot1', 'BOOT', 'vms', 240_000);
    timings.push(`BOOT session (3 nodes, one failing): ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const times = await bootTimes('boot1', GOOD);
    timings.push(`BOOT power-on action -> report: ${JSON.stringify(times)}`);
    for (const id of GOOD) {
      const c = await component(id);
      expect(c.status_override, `${id}: ${c.error}`).toBe('');
      expect(c.actual_bss_token).toBe(c.desired_bss_token);
      expect(c.actual_kernel).toMatch(/vmlinuz$/);
      expect(times[id]!.qemu).toBeGreaterThan(0);
    }
    for (const m of machines.nodes.filter((n) => GOOD.includes(n.xname))) {
      expect(machines.ipmitool(m, 'chassis', 'power', 'status')).toMatch(/is on/);
      expect(readFileSync(m.console, 'utf8')).toMatch(new RegExp(`bootorch-report: ${m.xname} reported`));
    }
    // The same lines came through IPMI SOL into the node's kept console, under this boot's attempt
    // (its power-on), and are what explain shows last.
    for (const id of GOOD) {
      const reported = new RegExp(`bootorch-report: ${id} reported`);
      let kept = { text: '', attempt: '' };
      await waitFor(
        async () =>
          reported.test(
            (kept = (await gql(`query($c: ID!) { nodeConsole(componentId: $c) { text attempt } }`, { c: id })).nodeConsole ?? kept).text,
          ),
        `${id}: its boot messages kept through SOL`,
        20_000,
      );
      expect(new Date(kept.attempt).getTime()).toBeGreaterThan(0);
      const tail = (await gql(`query($c: ID!) { explain(componentId: $c) { consoleTail } }`, { c: id })).explain.consoleTail;
      expect(tail.join('\n')).toMatch(reported);
    }
    // Every power-on booted the device bootorch set through IPMI (machines.ts): the network.
    for (const m of machines.nodes.filter((n) => NODES.some((x) => x.xname === n.xname))) {
      expect(m.boots().length, m.name).toBeGreaterThan(0);
      expect(
        m.boots().filter((b) => b !== 'pxe'),
        m.name,
      ).toEqual([]);
    }

    const broken = await component(BROKEN);
    expect(broken.status_override).toBe('failed');
    expect(broken.failure_reason).toBe('boot_never_reported');
    const ev = await events(BROKEN, 'boot1');
    const actions = ev.filter((e) => e.kind === 'action').map((e) => e.action);
    // Powered on, never reported, soft-off ignored by the firmware, forced off.
    expect(actions).toEqual(expect.arrayContaining(['powering_on', 'powering_off_gracefully', 'powering_off_forcefully']));
    expect(actions.indexOf('powering_off_forcefully')).toBeGreaterThan(actions.indexOf('powering_off_gracefully'));
    expect(ev.some((e) => e.kind === 'report')).toBe(false);
    expect(machines.ipmitool(machines.nodes.find((m) => m.xname === BROKEN)!, 'chassis', 'power', 'status')).toMatch(/is off/);
    // iPXE said why: the kernel URL did not load.
    expect(ev.find((e) => e.kind === 'error' && e.actor === `node:${BROKEN}`)?.error).toMatch(
      /^iPXE could not load the kernel http:\/\/10\.0\.2\.2:\d+\/boot\/v1\/files\/no-such-vmlinuz$/,
    );
  }, 300_000);

  it('reboots the booted nodes: a graceful off the guests obey, then a fresh boot and report', async () => {
    const before = Object.fromEntries(await Promise.all(GOOD.map(async (id) => [id, (await component(id)).actual_bss_token])));
    const t0 = Date.now();
    await runSession('reboot1', 'REBOOT', GOOD.join(','), 180_000);
    timings.push(`REBOOT session (2 nodes): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    timings.push(`REBOOT power-on action -> report: ${JSON.stringify(await bootTimes('reboot1', GOOD))}`);
    for (const id of GOOD) {
      const c = await component(id);
      expect(c.status_override, `${id}: ${c.error}`).toBe('');
      expect(c.actual_bss_token).toBe(c.desired_bss_token);
      expect(c.actual_bss_token).not.toBe(before[id]);
      const actions = (await events(id, 'reboot1')).filter((e) => e.kind === 'action').map((e) => e.action);
      expect(actions).toContain('powering_off_gracefully');
      expect(actions).not.toContain('powering_off_forcefully');
    }
  }, 200_000);

  it('rescues a booted VM into its rescue image with a one-time ticket, then unrescues it into its desired image', async () => {
    const id = GOOD[0]!;
    const m = machines.nodes.find((n) => n.xname === id)!;
    const before = await component(id);
    const desired = [before.desired_kernel, before.desired_kernel_parameters, before.desired_initrd];
    // Booted by the reboot before: its desired state is the boot set's image, which the unrescue brings back.
    expect(desired[0]).toBe('vmlinuz');
    const from = readFileSync(m.console, 'utf8').length;
    let t0 = Date.now();
    await runSession('rescue1', 'RESCUE', id, 180_000);
    timings.push(`RESCUE session (1 booted node): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const r = await component(id);
    expect(r.status_override, `${id}: ${r.error}`).toBe('');
    expect([r.rescue_kernel, r.rescue_initrd]).toEqual(['rescue/vmlinuz', 'rescue/initrd.gz']);
    expect([r.actual_kernel, r.actual_initrd]).toEqual(['rescue/vmlinuz', 'rescue/initrd.gz']);
    expect(r.actual_kernel_parameters).toMatch(/^console=ttyS0 quiet bos_update_frequency=\S+ bootorch_rescue=1$/);
    expect([r.desired_kernel, r.desired_kernel_parameters, r.desired_initrd]).toEqual(desired);
    // Its serial: the rescue image's init, its command line (with the boot script's ticket), its report.
    const serial = readFileSync(m.console, 'utf8').slice(from);
    const cmdline = /node: rescue image: (.*)/.exec(serial)?.[1];
    expect(cmdline, serial.slice(-2000)).toBeDefined();
    expect(serial).toMatch(new RegExp(`bootorch-report: ${id} reported`));
    expect(requests.some((l) => / GET \/boot\/v1\/files\/rescue\/vmlinuz 200$/.test(l))).toBe(true);
    // The ticket was traded once by the node's reporter; presented again it is refused and recorded.
    const ticket = /bootorch_ticket=(\S+)/.exec(cmdline!)![1]!;
    const again = await fetch(`${new URL(api.url).origin}/boot/v1/exchange`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ticket}` },
    });
    expect(again.status).toBe(401);
    const reuse = (await db.pool.query('select error from component_events where component_id = $1 and kind = $2', [id, 'error'])).rows;
    expect(reuse.some((e) => /ticket of boot attempt \S+ was presented again/.test(e.error))).toBe(true);

    const back = readFileSync(m.console, 'utf8').length;
    t0 = Date.now();
    await runSession('unrescue1', 'UNRESCUE', id, 180_000);
    timings.push(`UNRESCUE session (1 node): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const u = await component(id);
    expect(u.status_override, `${id}: ${u.error}`).toBe('');
    expect([u.rescue_kernel, u.rescue_kernel_parameters, u.rescue_initrd]).toEqual(['', '', '']);
    expect([u.actual_kernel, u.actual_kernel_parameters, u.actual_initrd]).toEqual(desired);
    expect(u.actual_bss_token).toBe(u.desired_bss_token);
    const actions = (await events(id, 'unrescue1')).filter((e) => e.kind === 'action').map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['powering_off_gracefully', 'powering_on']));
    const serial2 = readFileSync(m.console, 'utf8').slice(back);
    expect(serial2).toMatch(new RegExp(`bootorch-report: ${id} reported`));
    expect(serial2).not.toMatch(/node: rescue image/);
  }, 400_000);

  it('shuts the booted nodes down', async () => {
    const t0 = Date.now();
    await runSession('shutdown1', 'SHUTDOWN', GOOD.join(','), 120_000);
    timings.push(`SHUTDOWN session (2 nodes): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const m of machines.nodes.filter((n) => GOOD.includes(n.xname))) {
      expect(machines.ipmitool(m, 'chassis', 'power', 'status')).toMatch(/is off/);
      const c = await component(m.xname);
      expect(c.status_override, `${m.xname}: ${c.error}`).toBe('');
    }
  }, 150_000);

  it('deploys a disk image to one VM, which boots from its disk and reports; a wrong checksum fails the other, left off', async () => {
    // The image: the same kernel and initrd, whose init (bootorch_installed=1) reports ACTIVE with a
    // credential of its own, from the ticket bootorch put on the config drive its agent wrote.
    const port = new URL(api.url).port;
    const image = path.join(files, 'installed.img');
    const built = Date.now();
    buildDiskImage(image, {
      kernel: path.join(assets, 'vmlinuz'),
      initrd: path.join(assets, 'initrd.gz'),
      append: `console=ttyS0 quiet bootorch_installed=1 xname=${DEPLOYED} bootorch_url=http://10.0.2.2:${port}/graphql`,
    });
    const bytes = readFileSync(image);
    const checksum = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    // The deployed VM gets it as qcow2 (the ramdisk carries qemu-img, scripts/vm-assets.sh); the other as raw.
    const qcow2 = path.join(files, 'installed.qcow2');
    execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', image, qcow2], { stdio: 'pipe' });
    const qcow2Bytes = readFileSync(qcow2);
    timings.push(
      `disk image built in ${((Date.now() - built) / 1000).toFixed(1)} s: ${(bytes.length / 2 ** 20).toFixed(1)} MiB raw, ${(qcow2Bytes.length / 2 ** 20).toFixed(1)} MiB qcow2`,
    );
    const deploy = (sum: string) => ({ image: { url: 'installed.img', format: 'RAW', checksum: sum }, rootDeviceHints: { name: 'vda' } });
    // The deployed VM also gets a config drive: bootorch builds it (NoCloud, cidata) and its agent writes it.
    const userData = `#cloud-config\nhostname: ${DEPLOYED}\nruncmd:\n  - echo written by bootorch's deploy agent\n`;
    await gql(`mutation($i: SessionTemplateInput!) { putSessionTemplate(name: "deploy", input: $i) { template { name } } }`, {
      i: {
        enableCfs: false,
        bootSets: [
          {
            name: 'disk',
            type: 's3',
            path: 'manifest.json',
            kernelParameters: 'console=ttyS0 quiet',
            nodeList: [DEPLOYED],
            deploy: {
              ...deploy(checksum),
              image: {
                url: 'installed.qcow2',
                format: 'QCOW2',
                checksum: `sha256:${createHash('sha256').update(qcow2Bytes).digest('hex')}`,
              },
              configDrive: { userData, metaData: `instance-id: ${DEPLOYED}\n` },
            },
          },
          {
            name: 'bad',
            type: 's3',
            path: 'manifest.json',
            kernelParameters: 'console=ttyS0 quiet',
            nodeList: [BAD_CHECKSUM],
            deploy: deploy(`sha256:${'0'.repeat(64)}`),
          },
        ],
      },
    });
    const t0 = Date.now();
    await gql(`mutation($i: CreateSessionInput!) { createSession(input: $i) { session { name } } }`, {
      i: { name: 'deploy1', operation: 'BOOT', templateName: 'deploy', limit: 'deploy' },
    });
    await waitFor(
      async () => (await db.pool.query(`select status from sessions where name = 'deploy1'`)).rows[0]?.status === 'complete',
      'session deploy1 complete',
      360_000,
    );
    timings.push(`disk deploy session (2 nodes, one failing): ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const deploys = Object.fromEntries((await db.pool.query('select * from component_deploys')).rows.map((d: any) => [d.id, d]));

    const c = await component(DEPLOYED);
    const story = (await events(DEPLOYED, 'deploy1'))
      .map(
        (e) =>
          `${e.at.toISOString()} ${e.kind} ${e.action ?? ''} ${e.from_phase ?? ''}->${e.to_phase ?? ''} ${e.reason ?? ''} ${e.error ?? ''} ${JSON.stringify(e.data)}`,
      )
      .join('\n');
    expect(c.status_override, `${DEPLOYED}: ${c.error}\n${story}`).toBe('');
    expect(deploys[DEPLOYED].state).toBe('active');
    const vm = machines.nodes.find((m) => m.xname === DEPLOYED)!;
    expect(machines.ipmitool(vm, 'chassis', 'power', 'status')).toMatch(/is on/);
    const guest = readFileSync(vm.console, 'utf8');
    expect(guest).toMatch(/deploy agent exited 0/);
    expect(guest).toMatch(/installed system reported \(0\)/);
    // The disk holds the image, raw (read back from the VM's disk file).
    const disk = Buffer.alloc(bytes.length);
    const fd = openSync(path.join(machines.root, 'vm4-disk.raw'), 'r');
    readSync(fd, disk, 0, bytes.length, 0);
    closeSync(fd);
    // The image as written, but for the config drive's partition entry (MBR slot 2, bytes 462..477).
    const asImage = Buffer.from(disk);
    bytes.copy(asImage, 462, 462, 478);
    expect(`sha256:${createHash('sha256').update(asImage).digest('hex')}`).toBe(checksum);
    // The config drive, read on the host from the VM's disk file: a new MBR partition (slot 2) at the
    // end of the 64 MiB disk, whose filesystem blkid calls cidata and whose user-data mtools reads back.
    const diskFile = path.join(machines.root, 'vm4-disk.raw');
    const entry = disk.subarray(446 + 16, 446 + 32);
    const cd = { type: entry[4], start: entry.readUInt32LE(8), sectors: entry.readUInt32LE(12) };
    expect(cd).toEqual({ type: 0x0c, start: (64 * 2 ** 20) / 512 - 2048, sectors: 128 });
    const offset = String(cd.start * 512);
    const probe = execFileSync('blkid', ['-p', '-O', offset, '-o', 'export', diskFile], { encoding: 'utf8' });
    expect(probe).toMatch(/^LABEL=cidata$/m);
    const mtools = { encoding: 'utf8' as const, env: { ...process.env, MTOOLS_SKIP_CHECK: '1' } };
    expect(execFileSync('mtype', ['-i', `${diskFile}@@${offset}`, '::user-data'], mtools)).toBe(userData);
    timings.push(
      `config drive on ${DEPLOYED}'s disk: partition 2 at sector ${cd.start}, ${probe.match(/^TYPE=.*$/m)?.[0]} LABEL=cidata, user-data ${userData.length} bytes as given`,
    );
    // Two power-ons: into the deploy ramdisk, and the cycle into the installed system. Each booted the
    // device bootorch set through IPMI (machines.ts): the network, then the disk, with no network ROM
    // that time, so the installed system's report came from the disk, not through iPXE.
    expect(vm.powerOns().length).toBe(2);
    expect(vm.boots()).toEqual(['pxe', 'disk']);

    const bad = await component(BAD_CHECKSUM);
    expect({ status: bad.status, reason: bad.failure_reason }).toEqual({ status: 'failed', reason: 'checksum_mismatch' });
    expect(deploys[BAD_CHECKSUM].state).toBe('failed');
    expect(machines.ipmitool(machines.nodes.find((m) => m.xname === BAD_CHECKSUM)!, 'chassis', 'power', 'status')).toMatch(/is off/);

    // Timings per phase: from the power-on action, when each deploy state was first reached.
    for (const id of [DEPLOYED, BAD_CHECKSUM]) {
      const ev = await events(id, 'deploy1');
      const at = (e: { at: Date } | undefined) => (e ? e.at.getTime() : Number.NaN);
      const on = at(ev.find((e) => e.kind === 'action' && e.action === 'powering_on'));
      const marks: Array<[string, number]> = [
        ...Object.entries(deploys[id].reached as Record<string, string>)
          .filter(([s]) => s !== 'pending')
          .map(([s, t]): [string, number] => [s, new Date(t).getTime()]),
        ['switching_to_disk action', at(ev.find((e) => e.kind === 'action' && e.action === 'switching_to_disk'))],
        ['config drive writing', at(ev.find((e) => e.kind === 'report' && String(e.data?.message ?? '').startsWith('config drive')))],
        ['failed (node off)', at(ev.find((e) => e.kind === 'failed'))],
      ];
      const line = marks
        .filter(([, t]) => Number.isFinite(t))
        .sort((a, b) => a[1] - b[1])
        .map(([s, t]) => `${s} +${((t - on) / 1000).toFixed(1)} s`)
        .join(', ');
      timings.push(`deploy ${id} from the power-on action: ${line}`);
    }
  }, 420_000);
});
