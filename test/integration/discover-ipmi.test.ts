/**
 * Discovery and re-inspection over IPMI with the real ipmitool against OpenIPMI's ipmi_sim BMCs, each
 * with a FRU (test/helpers/ipmi-sim.ts fruImage): a BMC whose FRU's Product Extra holds the boot MAC is
 * registered with its manufacturer, model, serial and BMC firmware; one whose FRU has no MAC is
 * refused (nothing to boot it by); a stopped BMC is unreachable; a wrong password is refused_login; a
 * re-inspection of the registered node reads it again with its stored login.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { fruImage, SIM_BMC_PASSWORD, SIM_BMC_USER, SolBmc } from '../helpers/ipmi-sim.ts';
import { haveTools } from '../helpers/tools.ts';
import { NodeDiscovery, type DiscoveryResult } from '../../src/adapters/standalone/discovery.ts';
import { open } from '../../src/adapters/standalone/secrets.ts';
import { listNodes } from '../../src/db/node-inventory.ts';
import type { Checked } from '../../src/domain/validation.ts';

const HAVE_ALL = haveTools('test/integration/discover-ipmi', ['ipmitool', 'ipmi_sim']);
const key = randomBytes(32);
let db: TestDb;
let withMac: SolBmc;
let noMac: SolBmc;
let gone: SolBmc;

const value = (r: Checked<DiscoveryResult>): DiscoveryResult => {
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.value;
};

describe.skipIf(!HAVE_ALL)('discovery over IPMI (ipmitool against ipmi_sim)', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    withMac = await SolBmc.start(
      'fru-a',
      1,
      fruImage({ manufacturer: 'QEMU', name: 'Standard PC', serial: 'SER0001', extra: ['mac=52:54:00:00:10:01'] }),
    );
    noMac = await SolBmc.start('fru-b', 2, fruImage({ manufacturer: 'QEMU', name: 'Standard PC', serial: 'SER0002' }));
    gone = await SolBmc.start('fru-c', 3);
    await gone.stop();
    db = await freshDb();
  });
  afterAll(async () => {
    await withMac?.stop();
    await noMac?.stop();
    await db?.drop();
  });

  const discovery = () => new NodeDiscovery({ secretKey: key, timeoutMs: 4000 });
  const request = (over: Record<string, unknown> = {}) => ({
    driver: 'ipmi',
    targets: [withMac.address, noMac.address, gone.address],
    username: SIM_BMC_USER,
    password: SIM_BMC_PASSWORD,
    xnamePattern: 'x3000c0s{n}b0n0',
    ...over,
  });

  it('registers the BMC with a MAC in its FRU, refuses the one without, names the stopped one', async () => {
    const r = value(await discovery().discover(db.db, request()));
    expect(r.nodes.map((n) => [n.address, n.xname, n.action])).toEqual([
      [withMac.address, 'x3000c0s0b0n0', 'create'],
      [noMac.address, 'x3000c0s1b0n0', 'refused'],
    ]);
    expect(r.nodes[1]!.action === 'refused' && r.nodes[1]!.problem).toMatch(/no enabled network interface with a MAC/);
    expect(r.failures.map((f) => [f.address, f.problem])).toEqual([[gone.address, 'unreachable']]);
    const [n] = await listNodes(db.db);
    expect(n).toMatchObject({ id: 'x3000c0s0b0n0', mac: '52:54:00:00:10:01', bmcDriver: 'ipmi', bmcAddress: withMac.address });
    expect(n!.hardware).toMatchObject({
      source: 'ipmi',
      manufacturer: 'QEMU',
      model: 'Standard PC',
      serialNumber: 'SER0001',
      macs: ['52:54:00:00:10:01'],
    });
    expect(n!.hardware!.bmcFirmwareVersion).toMatch(/^\d+\.\d+$/);
    expect(open(key, n!.id, n!.bmcSecret)).toBe(SIM_BMC_PASSWORD);
  });

  it('a wrong password is refused_login', async () => {
    const r = value(await discovery().discover(db.db, request({ password: 'wrong', dryRun: true, targets: [withMac.address] })));
    expect(r.failures.map((f) => [f.address, f.problem])).toEqual([[withMac.address, 'refused_login']]);
  });

  it('re-inspects the registered node with its stored login', async () => {
    const r = value(await discovery().inspect(db.db, ['x3000c0s0b0n0'], true));
    expect(r.failures).toEqual([]);
    expect(r.nodes.map((n) => [n.xname, n.action])).toEqual([['x3000c0s0b0n0', 'unchanged']]);
  });
});
