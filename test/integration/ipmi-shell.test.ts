/**
 * IPMI through long-lived `ipmitool shell` processes (src/adapters/standalone/ipmi-shell.ts), with the
 * real ipmitool against real OpenIPMI ipmi_sim BMCs (test/helpers/ipmi-sim.ts): calls to one BMC share
 * one shell; a BMC killed mid-use is the named failure and the call after it comes back gets a new
 * shell; a hung shell is killed at the deadline and replaced; idle shells close; the cap on open shells
 * holds; a process that dies leaves no shell behind. Processes are counted as the system sees them: ipmitool children of this process in /proc.
 * Skipped, saying so, without the binaries.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { haveTools } from '../helpers/tools.ts';
import { SIM_BMC_PASSWORD, SIM_BMC_USER, SolBmc, ipmitoolChildren as ipmitools } from '../helpers/ipmi-sim.ts';
import { waitFor } from '../helpers/wait.ts';
import { ROOT } from '../helpers/processes.ts';
import { IpmiTool, type IpmiOptions } from '../../src/adapters/standalone/ipmi.ts';
import { BmcGuard } from '../../src/adapters/standalone/bmc-guard.ts';
import { BmcError, type BmcTarget } from '../../src/adapters/standalone/bmc.ts';

const HAVE_ALL = haveTools('test/integration/ipmi-shell', ['ipmitool', 'ipmi_sim']);

const target = (b: SolBmc, id = 'x3000c0s1b0n0'): BmcTarget => ({
  id,
  address: b.address,
  username: SIM_BMC_USER,
  password: SIM_BMC_PASSWORD,
});

describe.skipIf(!HAVE_ALL)('IPMI shells against ipmi_sim', () => {
  const bmcs: SolBmc[] = [];
  const tools: IpmiTool[] = [];
  const tool = (o: IpmiOptions = {}) => {
    const t = new IpmiTool({ timeoutMs: 6000, ...o });
    tools.push(t);
    return t;
  };
  const count = (n: number, what: string) =>
    waitFor(
      async () => ipmitools().length === n,
      what,
      10_000,
      () => `${ipmitools().length} ipmitool processes`,
      50,
    );

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) bmcs.push(await SolBmc.start(`shell${i}`, 40 + i));
    // ipmi_sim answers once it has read its configuration.
    await Promise.all(bmcs.map((b) => new IpmiTool({ mode: 'process', timeoutMs: 6000 }).powerState(target(b))));
  }, 60_000);

  afterEach(async () => {
    await Promise.all(tools.splice(0).map((t) => t.close()));
    await count(0, 'no shell left after a test');
  }, 15_000);

  afterAll(async () => {
    for (const b of bmcs) await b.stop();
  }, 30_000);

  it('many calls to one BMC share one shell, one process', async () => {
    const t = tool();
    const seen = new Set<number>();
    for (let i = 0; i < 20; i++) {
      expect(await t.powerState(target(bmcs[0]!))).toBe('off');
      for (const pid of ipmitools()) seen.add(pid);
    }
    expect(t.shells!.started).toBe(1);
    expect(seen.size).toBe(1);
    expect(ipmitools()).toEqual([...seen]);
  }, 30_000);

  it('a refused boot device goes on to the power command, as with a process per call (ipmitool exits 0 on it); the refused power-on is bmc_error', async () => {
    for (const mode of ['shell', 'process'] as const) {
      const e = await tool({ mode })
        .power(target(bmcs[0]!), 'On')
        .then(
          () => undefined,
          (x: unknown) => x,
        );
      expect(e).toBeInstanceOf(BmcError);
      expect((e as BmcError).kind).toBe('bmc_error');
      expect((e as BmcError).message).toMatch(
        /chassis power on failed: bmc_error: .*Up\/On failed: Invalid data field in request \((ipmitool shell|exit 1)\)$/,
      );
    }
  }, 30_000);

  it('a BMC killed mid-use fails the call as unreachable (through the guard, counted by its circuit); after it comes back a new shell answers', async () => {
    const b = bmcs[1]!;
    const t = tool();
    const guard = new BmcGuard();
    const driver = guard.wrap(t);
    expect(await driver.powerState(target(b))).toBe('off');
    const [first] = ipmitools();
    await b.kill();
    const e = await driver.powerState(target(b)).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(BmcError);
    expect((e as BmcError).kind).toBe('unreachable');
    expect((e as BmcError).message).toMatch(
      /chassis power status failed: unreachable: .*Unable to establish IPMI v2 \/ RMCP\+ session \(exit 1\)$/,
    );
    expect(guard.state(b.address)).toMatchObject({ state: 'closed', failures: 1 });
    await count(0, 'the dead BMC holds no shell');
    b.restart();
    expect(await driver.powerState(target(b))).toBe('off');
    expect(guard.state(b.address).failures).toBe(0);
    const now = ipmitools();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first);
  }, 30_000);

  it('a hung shell is killed at the deadline with the named timeout, and the next call gets a new one', async () => {
    const t = tool({ timeoutMs: 3000 });
    expect(await t.powerState(target(bmcs[0]!))).toBe('off');
    const [hung] = ipmitools();
    process.kill(hung!, 'SIGSTOP');
    const e = await t.powerState(target(bmcs[0]!)).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(BmcError);
    expect((e as BmcError).kind).toBe('timeout');
    expect((e as BmcError).message).toMatch(/chassis power status failed: timeout: .*no answer within 3 s$/);
    await count(0, 'the hung shell killed');
    expect(await t.powerState(target(bmcs[0]!))).toBe('off');
    expect(t.shells!.started).toBe(2);
    expect(ipmitools()).not.toContain(hung);
  }, 30_000);

  it('an idle shell closes', async () => {
    const t = tool({ shellIdleMs: 300 });
    expect(await t.powerState(target(bmcs[0]!))).toBe('off');
    expect(ipmitools()).toHaveLength(1);
    await count(0, 'the idle shell closed');
    expect(t.shells!.size).toBe(0);
  }, 30_000);

  it('the cap on open shells holds: the least recently used idle one closes, and past busy shells a call runs as a process', async () => {
    const t = tool({ maxShells: 2 });
    let most = 0;
    for (const b of [0, 1, 2, 0, 1, 2]) {
      expect(await t.powerState(target(bmcs[b]!))).toBe('off');
      expect(t.shells!.size).toBeLessThanOrEqual(2);
      most = Math.max(most, ipmitools().length);
    }
    // Each call past the cap closed the least recently used shell: 0, 1, 2, then 0 and 1 again.
    expect(t.shells!.started).toBe(6);
    await count(2, 'two shells open');
    expect(most).toBeLessThanOrEqual(3); // a closing shell may still be on its way out

    const one = tool({ maxShells: 1 });
    const both = await Promise.all([one.powerState(target(bmcs[0]!)), one.powerState(target(bmcs[1]!, 'x3000c0s2b0n0'))]);
    expect(both).toEqual(['off', 'off']);
    expect(one.shells!.started).toBe(1);
    expect(one.shells!.size).toBe(1);
  }, 60_000);

  it('a process killed outright leaves no shell behind (ipmitool does not end at the end of its input)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-ipmi-orphan-'));
    const script = path.join(dir, 'holder.mts');
    writeFileSync(
      script,
      `import { IpmiTool } from ${JSON.stringify(path.join(ROOT, 'src/adapters/standalone/ipmi.ts'))};
const t = new IpmiTool({ timeoutMs: 6000 });
const state = await t.powerState(${JSON.stringify(target(bmcs[2]!))});
console.log(state);
setInterval(() => {}, 1000);
`,
    );
    const holder = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const said = await new Promise<string>((resolve) => holder.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
    expect(said).toBe('off');
    const [shell] = ipmitools(holder.pid);
    expect(shell).toBeDefined();
    holder.kill('SIGKILL');
    await waitFor(
      async () => !readdirSync('/proc').includes(String(shell)),
      'the orphaned shell gone',
      10_000,
      () => `ipmitool ${shell} alive`,
      50,
    );
  }, 30_000);
});
