/**
 * The IPMI power path with the real ipmitool against real OpenIPMI ipmi_sim BMCs (no VM: the
 * machine is a process, power = it runs): status, the PXE boot device, on, a soft-off the BMC cannot
 * deliver, forced off, and the classified failures (a wrong password is bmc_auth_failed, a BMC that
 * does not answer bmc_unreachable, each with ipmitool's own words), as unknown power and failed
 * tasks, never a thrown call; both ways of running ipmitool (a shell per BMC, a process per call).
 * Skipped, saying so, without the binaries; the VM test (test/vm) boots real VMs through the same path.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { haveTools } from '../helpers/tools.ts';
import { Machines, BMC_PASSWORD, BMC_USER, type VmNode } from '../vm/machines.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { StandalonePower } from '../../src/adapters/standalone/power.ts';
import { IpmiTool, classifyIpmitool } from '../../src/adapters/standalone/ipmi.ts';
import { RedfishClient } from '../../src/adapters/standalone/redfish.ts';
import { createStandaloneAdapters } from '../../src/adapters/standalone/factory.ts';
import { ipmitoolChildren } from '../helpers/ipmi-sim.ts';

const HAVE_ALL = haveTools('test/integration/ipmi-sim', ['ipmitool', 'ipmi_sim']);

describe('ipmitool output classification', () => {
  // ipmitool 1.8.19 -v, as it answers ipmi_sim (a wrong password, an unknown user, nothing listening).
  const session = 'Error: Unable to establish IPMI v2 / RMCP+ session';
  it.each([
    ['wrong password', `Loading IANA PEN Registry...\n> RAKP 2 HMAC is invalid\n${session}`, 'refused_login'],
    ['unknown user', `Loading IANA PEN Registry...\nRAKP 2 message indicates an error : unauthorized name\n${session}`, 'refused_login'],
    [
      'nothing answers',
      `Loading IANA PEN Registry...\nGet Auth Capabilities error\nError issuing Get Channel Authentication Capabilities request\n${session}`,
      'unreachable',
    ],
    ['no session, no detail', session, 'unreachable'],
    ['other', 'Close Session command failed', 'bmc_error'],
  ])('%s', (_what, out, kind) => expect(classifyIpmitool(out)).toBe(kind));

  it("fits ipmitool's own retries inside the deadline (about r(r+1) s with -N 1 -R r)", () => {
    expect(IpmiTool.retryArgs(4000)).toEqual(['-N', '1', '-R', '1']);
    expect(IpmiTool.retryArgs(15_000)).toEqual(['-N', '1', '-R', '3']);
  });

  it('splits host:port, [v6]:port and a bare host', () => {
    expect(IpmiTool.hostArgs('127.0.0.1:9001')).toEqual(['-H', '127.0.0.1', '-p', '9001']);
    expect(IpmiTool.hostArgs('[fe80::1]:623')).toEqual(['-H', 'fe80::1', '-p', '623']);
    expect(IpmiTool.hostArgs('bmc1')).toEqual(['-H', 'bmc1']);
  });
});

describe.skipIf(!HAVE_ALL).each(['shell', 'process'] as const)('IPMI power with ipmitool (%s) against ipmi_sim', (mode) => {
  let db: TestDb;
  let tool: IpmiTool;
  let machines: Machines;
  let power: StandalonePower;
  let a: VmNode;
  let b: VmNode;
  const key = randomBytes(32);

  beforeAll(async () => {
    db = await freshDb();
    machines = new Machines({ machine: 'sleep' });
    a = await machines.add('a', 'x3000c0s10b0n0', 10);
    b = await machines.add('b', 'x3000c0s11b0n0', 11);
    await machines.ready();
    const r = await new NodeRegistry(key).register(db.db, [
      { xname: a.xname, mac: a.mac, bmc: { driver: 'ipmi', address: a.bmcAddress, username: BMC_USER, password: BMC_PASSWORD } },
      { xname: b.xname, mac: b.mac, bmc: { driver: 'ipmi', address: b.bmcAddress, username: BMC_USER, password: 'wrong' } },
      // Nothing listens there: ipmitool gives up after its own retries, or our deadline kills it.
      {
        xname: 'x3000c0s12b0n0',
        mac: '52:54:00:00:03:12',
        bmc: { driver: 'ipmi', address: '127.0.0.1:9', username: BMC_USER, password: 'x' },
      },
    ]);
    expect(r.ok).toBe(true);
    power = new StandalonePower(db.db, {
      // ipmitool gives up on the dead BMC after about 2 s (-R 1), within the 4 s deadline; the read is waited for.
      drivers: { ipmi: (tool = new IpmiTool({ timeoutMs: 4000, mode })), redfish: new RedfishClient() },
      secretKey: key,
      passWaitMs: 10_000,
    });
  }, 60_000);

  afterAll(async () => {
    await power?.idle();
    await tool?.close();
    await machines?.stop();
    await db?.drop();
  }, 30_000);

  it("reads status; a wrong password and a dead BMC are unknown power, each with its own cause and the BMC's words", async () => {
    const st = await power.powerStatus([a.xname, b.xname, 'x3000c0s12b0n0']);
    expect(st.get(a.xname)).toEqual({ state: 'off', error: '' });
    expect(st.get(b.xname)).toEqual({
      state: 'unknown',
      cause: 'bmc_auth_failed',
      error: `BMC ipmitool chassis power status failed: refused_login: x3000c0s11b0n0 (BMC ${b.bmcAddress}): > RAKP 2 HMAC is invalid | Error: Unable to establish IPMI v2 / RMCP+ session (exit 1)`,
    });
    expect(st.get('x3000c0s12b0n0')).toEqual({
      state: 'unknown',
      cause: 'bmc_unreachable',
      error:
        'BMC ipmitool chassis power status failed: unreachable: x3000c0s12b0n0 (BMC 127.0.0.1:9): Error issuing Get Channel Authentication Capabilities request | Error: Unable to establish IPMI v2 / RMCP+ session (exit 1)',
    });
  }, 30_000);

  it('On boots from the network once, then powers on; a soft-off the BMC cannot deliver is a failed task and the node stays on; Force-Off works', async () => {
    const [on] = await power.transition('On', [a.xname]);
    await power.idle();
    expect((await power.getTransition(on!))!.tasks).toEqual([{ xname: a.xname, status: 'succeeded', error: '' }]);
    expect((await power.powerStatus([a.xname])).get(a.xname)!.state).toBe('on');
    expect(a.powerOns()).toHaveLength(1);

    const [soft] = await power.transition('Soft-Off', [a.xname]);
    await power.idle();
    // ipmi_sim forwards a soft-off to the VM's channel; with no VM on it, it refuses the command.
    // A process says so by its exit code, a shell by the answer it did not give.
    expect((await power.getTransition(soft!))!.tasks[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(
        mode === 'shell'
          ? /chassis power soft failed: bmc_error: .*Soft failed: Unspecified error \(ipmitool shell\)$/
          : /chassis power soft failed: bmc_error: .*\(exit 1\)/,
      ),
    });
    expect((await power.powerStatus([a.xname])).get(a.xname)!.state).toBe('on');

    await power.transition('Force-Off', [a.xname]);
    await power.idle();
    // With no VM to tell, ipmi_sim kills the machine after its poweroff_wait (1 s here).
    const until = Date.now() + 10_000;
    let state = '';
    do state = (await power.powerStatus([a.xname])).get(a.xname)!.state;
    while (state !== 'off' && Date.now() < until);
    expect(state).toBe('off');
  }, 30_000);

  it('a failed call is a failed task with its class, not a thrown transition', async () => {
    const [tid] = await power.transition('On', [b.xname, 'x9000c0s0b0n0']);
    await power.idle();
    const tasks = (await power.getTransition(tid!))!.tasks;
    expect(tasks[0]).toMatchObject({
      xname: b.xname,
      status: 'failed',
      error: expect.stringMatching(/chassis bootdev pxe failed: refused_login: .*RAKP 2 HMAC is invalid/),
    });
    expect(tasks[1]).toEqual({ xname: 'x9000c0s0b0n0', status: 'failed', error: 'not in the inventory' });
    expect(b.powerOns()).toHaveLength(0);
  }, 30_000);

  it.runIf(mode === 'shell')(
    "closing the adapters (the role's stop) ends their IPMI shells, not waiting for the idle close",
    async () => {
      const before = ipmitoolChildren();
      const adapters = createStandaloneAdapters({ db: db.db, secretKey: key, bmcTimeoutMs: 4000 });
      expect((await adapters.power.powerStatus([a.xname])).get(a.xname)!.state).toMatch(/^(on|off)$/);
      await adapters.power.idle();
      const opened = ipmitoolChildren().filter((pid) => !before.includes(pid));
      expect(opened).toHaveLength(1);
      await adapters.close!();
      expect(ipmitoolChildren()).not.toContain(opened[0]);
    },
    30_000,
  );
});
