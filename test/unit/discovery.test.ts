/** Discovery's pure half: targets, the plan, hardware terms in limit expressions (tables). */
import { describe, expect, it } from 'vitest';
import { expandTargets, newNodeName, planDiscovery, type FoundSystem, type KnownNode } from '../../src/domain/discovery.ts';
import { emptyHardware, type NodeHardware } from '../../src/domain/hardware.ts';
import { matchesHardware, parseHardwareTerm } from '../../src/domain/hardware-limit.ts';
import { applyLimit, LimitSyntaxError } from '../../src/domain/limit.ts';

describe('expandTargets', () => {
  it.each([
    [['10.0.0.7'], ['10.0.0.7']],
    [
      ['10.0.0.7:8443', 'bmc7.example', 'BMC8.example:623'],
      ['10.0.0.7:8443', 'bmc7.example', 'bmc8.example:623'],
    ],
    [['10.0.0.0/30'], ['10.0.0.1', '10.0.0.2']],
    [['10.0.0.5/31'], ['10.0.0.4', '10.0.0.5']],
    [['10.0.0.9/32'], ['10.0.0.9']],
    [['10.0.0.254-10.0.1.1'], ['10.0.0.254', '10.0.0.255', '10.0.1.0', '10.0.1.1']],
    [
      ['10.0.0.10-12', '10.0.0.11'],
      ['10.0.0.10', '10.0.0.11', '10.0.0.12'],
    ],
  ])('%j -> %j', (targets, addresses) => {
    expect(expandTargets(targets)).toEqual({ ok: true, addresses });
  });

  it.each([
    [[], 'targets', 'names no BMC'],
    [['10.0.0.0/33'], 'targets[0]', 'is not an IPv4 CIDR block'],
    [['10.0.0.300'], 'targets[0]', 'is not an address'],
    [['10.0.0.9-3'], 'targets[0]', 'ends before it starts'],
    [['10.0.0.1-10.0.0.300'], 'targets[0]', 'is not an IPv4 range'],
    [['bad host!'], 'targets[0]', 'is not an address'],
    [['10.0.0.0/16'], 'targets[0]', 'holds 65,534 addresses: one discovery asks at most 16,384 BMCs'],
  ])('%j is refused at %s', (targets, field, message) => {
    const r = expandTargets(targets);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]).toEqual({ field, message: expect.stringContaining(message) });
  });

  it('counts every target against the bound', () => {
    const r = expandTargets(['10.0.0.0/24', '10.0.1.0/24'], 300);
    expect(!r.ok && r.errors.map((e) => e.field)).toEqual(['targets[1]']);
  });
});

describe('newNodeName', () => {
  it.each([
    ['x3000c0s{n}b0n0', 7, '1', 'x3000c0s7b0n0'],
    [undefined, 7, 'x1000c0s0b0n0', 'x1000c0s0b0n0'],
    [undefined, 7, 'System.Embedded.1', undefined],
  ])('%s at %i, system %s -> %s', (pattern, n, id, want) => {
    expect(newNodeName(pattern, n, id)).toEqual(want);
  });
  it('a pattern that gives no xname is an error', () => {
    expect(newNodeName('rack{n}', 1, '1')).toEqual({ error: expect.stringContaining('xnamePattern gives') });
  });
});

const hw = (over: Partial<NodeHardware> = {}): NodeHardware => ({
  ...emptyHardware('redfish'),
  cpuCount: 2,
  memoryGiB: 512,
  biosVersion: '1.4.2',
  bmcFirmwareVersion: '2.10.1',
  ...over,
});
const sys = (i: number, over: Partial<NodeHardware> = {}, systemId = `x1000c0s${i}b0n0`): FoundSystem => ({
  address: `10.0.0.${i}`,
  bmcAddress: `https://10.0.0.${i}/redfish/v1/Systems/1`,
  driver: 'redfish',
  systemId,
  position: i,
  hardware: hw({ macs: [`52:54:00:00:00:0${i}`], ...over }),
});
const node = (i: number, over: Partial<KnownNode> = {}): KnownNode => ({
  id: `x1000c0s${i}b0n0`,
  mac: `52:54:00:00:00:0${i}`,
  bmcDriver: 'redfish',
  bmcAddress: `https://10.0.0.${i}/redfish/v1/Systems/1`,
  hardware: sys(i).hardware,
  ...over,
});

describe('planDiscovery', () => {
  it('creates, updates and leaves unchanged', () => {
    const plan = planDiscovery([sys(1), sys(2, { memoryGiB: 1024 }), sys(3)], [node(1), node(2)]);
    expect(plan.map((p) => [p.xname, p.action])).toEqual([
      ['x1000c0s1b0n0', 'unchanged'],
      ['x1000c0s2b0n0', 'update'],
      ['x1000c0s3b0n0', 'create'],
    ]);
    expect(plan[1]!.action === 'update' && plan[1]!.changes).toEqual([{ field: 'hardware.memoryGiB', from: '512', to: '1024' }]);
  });

  it('matches a known node by BMC address first: a changed MAC is an update of it', () => {
    const [p] = planDiscovery([sys(1, { macs: ['52:54:00:00:00:99'] })], [node(1)]);
    expect(p).toMatchObject({ xname: 'x1000c0s1b0n0', action: 'update' });
    expect(p!.action === 'update' && p!.changes[0]).toEqual({ field: 'mac', from: '52:54:00:00:00:01', to: '52:54:00:00:00:99' });
  });

  it('matches by boot MAC when the BMC moved', () => {
    const [p] = planDiscovery([sys(1)], [node(1, { bmcAddress: 'https://10.9.9.9/redfish/v1/Systems/1' })]);
    expect(p).toMatchObject({ xname: 'x1000c0s1b0n0', action: 'update' });
  });

  it('refuses, naming why', () => {
    const plan = planDiscovery(
      [
        sys(1, { macs: ['52:54:00:00:00:07'] }),
        sys(2, { macs: ['52:54:00:00:00:07'] }),
        sys(3, { macs: [] }),
        sys(4, { macs: ['52:54:00:00:00:05'] }),
        sys(6, {}, 'System.Embedded.1'),
      ],
      [node(5)],
    );
    const problems = plan.map((p) => (p.action === 'refused' ? p.problem : p.action));
    expect(problems[0]).toMatch(/MAC 52:54:00:00:00:07 is reported by another BMC too \(https:\/\/10\.0\.0\.2\//);
    expect(problems[1]).toMatch(/reported by another BMC too \(https:\/\/10\.0\.0\.1\//);
    expect(problems[2]).toMatch(/no enabled network interface/);
    expect(problems[3]).toBe('update');
    expect(problems[4]).toMatch(/no xname for a new node: system Id "System.Embedded.1"/);
  });

  it('refuses a boot MAC another known node holds, and two systems on one xname', () => {
    const held = planDiscovery([sys(1, { macs: ['52:54:00:00:00:02'] })], [node(1), node(2)]);
    expect(held[0]).toMatchObject({ action: 'refused', problem: 'boot MAC 52:54:00:00:00:02 is registered to x1000c0s2b0n0' });
    const same = planDiscovery([sys(1), sys(2)], [], 'x3000c0s1b0n0');
    expect(same.map((p) => p.action)).toEqual(['refused', 'refused']);
    expect(same[0]).toMatchObject({ problem: 'x3000c0s1b0n0 would be the name of 2 systems' });
  });
});

describe('hardware terms', () => {
  const h = hw({ macs: ['52:54:00:00:00:01'], model: 'R650' });
  it.each([
    ['memoryGiB>=512', true],
    ['memoryGiB>512', false],
    ['memoryGiB=512', true],
    ['memoryGiB<1e3', true],
    ['memoryGiB>=lots', false],
    ['cpus=2', true],
    ['bios<1.10', true],
    ['bios>1.4.1', true],
    ['bios=1.4.2', true],
    ['bios!=1.4.2', false],
    ['bmcFirmware>=2.9.0', true],
    ['model=R650', true],
    ['mac=52:54:00:00:00:01', true],
    ['mac!=52:54:00:00:00:01', false],
  ])('%s: %s', (term, want) => {
    expect(matchesHardware(h, parseHardwareTerm(term)!)).toBe(want);
  });

  it('a node never inspected matches no term; names are not terms', () => {
    expect(matchesHardware(null, parseHardwareTerm('memoryGiB>0')!)).toBe(false);
    expect(parseHardwareTerm('compute')).toBeUndefined();
    expect(parseHardwareTerm('x1000c0s0b0n0')).toBeUndefined();
  });

  it('in a limit expression: with an inventory that knows hardware, and without one', () => {
    const nodes = new Set(['a', 'b', 'c']);
    const big = new Set(['b']);
    const inv = { members: (n: string) => (n === 'compute' ? new Set(['a', 'b']) : undefined), hardware: () => big };
    expect(applyLimit(nodes, 'compute,&memoryGiB>=1024', inv)).toEqual(new Set(['b']));
    expect(applyLimit(nodes, 'compute,!memoryGiB>=1024', inv)).toEqual(new Set(['a']));
    expect(() => applyLimit(nodes, 'memoryGiB>=1024', { members: () => undefined })).toThrow(LimitSyntaxError);
  });
});
