import { afterEach, describe, expect, it } from 'vitest';
import { isNodeXname } from '../../src/domain/xname.ts';
import { SimWorld } from '../../src/sim/world.ts';

const worlds: SimWorld[] = [];
const make = (o: ConstructorParameters<typeof SimWorld>[0] = {}) => {
  const w = new SimWorld(o);
  worlds.push(w);
  return w;
};
afterEach(() => worlds.splice(0).forEach((w) => w.close()));

describe('sim layout', () => {
  it('lays out 256 compute nodes per Mountain cabinet, in xname order, NIDs from 1', () => {
    const w = make({ nodes: 600 });
    const ids = w.ids();
    expect(ids).toHaveLength(600);
    expect(ids.every(isNodeXname)).toBe(true);
    expect(ids[0]).toBe('x1000c0s0b0n0');
    expect(ids[1]).toBe('x1000c0s0b0n1');
    expect(ids[2]).toBe('x1000c0s0b1n0');
    expect(ids[4]).toBe('x1000c0s1b0n0');
    expect(ids[255]).toBe('x1000c7s7b1n1');
    expect(ids[256]).toBe('x1001c0s0b0n0');
    expect(new Set(ids).size).toBe(600);
    const n = w.node('x1000c3s5b1n0')!;
    expect(n).toMatchObject({ role: 'Compute', subRole: '', arch: 'X86', class: 'Mountain', enabled: true, power: 'off' });
    expect(n.nid).toBe(3 * 32 + 5 * 4 + 2 + 1);
    expect(w.groups.get('cab-x1000')).toHaveLength(256);
    expect(w.groups.get('cab-x1002')).toHaveLength(88);
  });

  it('has blade, user groups and partition p1', () => {
    const w = make({ nodes: 100 });
    expect(w.groups.get('blade-x86')).toHaveLength(100);
    expect(w.groups.get('blade-arm')).toEqual([]);
    expect(w.groups.get('compute-a')).toHaveLength(50);
    expect(w.groups.get('compute-b')).toHaveLength(50);
    expect(w.groups.get('compute-a')![0]).toBe('x1000c0s0b0n0');
    expect(w.partitions.get('p1')).toHaveLength(100);
  });

  it('makes whole blades ARM by the configured fraction, deterministically per seed', () => {
    const a = make({ nodes: 512, armFraction: 0.25, seed: 7 });
    const b = make({ nodes: 512, armFraction: 0.25, seed: 7 });
    const arm = a.groups.get('blade-arm')!;
    expect(arm).toEqual(b.groups.get('blade-arm'));
    expect(arm.length).toBeGreaterThan(0);
    expect(arm.length % 4).toBe(0);
    for (const id of arm) {
      const blade = id.replace(/b\dn\d$/, '');
      expect(
        a
          .ids()
          .filter((x) => x.startsWith(`${blade}b`))
          .every((x) => a.node(x)!.arch === 'ARM'),
      ).toBe(true);
    }
    expect(arm.length / 512).toBeGreaterThan(0.1);
    expect(arm.length / 512).toBeLessThan(0.45);
  });

  it('adds a River cabinet with management and UAN nodes', () => {
    const w = make({ nodes: 8, river: true });
    const river = w.groups.get('cab-x3000')!;
    expect(river).toHaveLength(11);
    expect(river[0]).toBe('x3000c0s1b0n0');
    expect(w.node('x3000c0s1b0n0')).toMatchObject({ role: 'Management', subRole: 'Master', class: 'River' });
    expect(w.node('x3000c0s4b0n0')).toMatchObject({ role: 'Management', subRole: 'Worker' });
    expect(w.node('x3000c0s7b0n0')).toMatchObject({ role: 'Management', subRole: 'Storage' });
    expect(w.node('x3000c0s10b0n0')).toMatchObject({ role: 'Application', subRole: 'UAN' });
    expect(w.node('x3000c0s11b0n0')!.nid).toBeGreaterThan(100_000);
    // River nodes are not in the compute user groups or p1.
    expect(w.groups.get('compute-b')).not.toContain('x3000c0s1b0n0');
    expect(w.partitions.get('p1')).toHaveLength(8);
  });

  it('applies locked and disabled lists, and runtime changes', () => {
    const w = make({ nodes: 8, locked: ['x1000c0s0b0n0'], disabled: ['x1000c0s0b0n1'] });
    expect(w.node('x1000c0s0b0n0')!.locked).toBe(true);
    expect(w.node('x1000c0s0b0n1')!.enabled).toBe(false);
    w.setLocked(['x1000c0s0b0n0'], false);
    w.setEnabled(['x1000c0s0b1n0'], false);
    expect(w.node('x1000c0s0b0n0')!.locked).toBe(false);
    expect(w.node('x1000c0s0b1n0')!.enabled).toBe(false);
  });

  it('creates a CFS component per node and a default image', () => {
    const w = make({ nodes: 4 });
    expect(w.cfs.components.size).toBe(4);
    expect(w.cfs.status('x1000c0s0b0n0')).toBe('unconfigured');
    expect(w.defaultImage.manifest).toMatch(/^s3:\/\/boot-images\/[0-9a-f-]{36}\/manifest\.json$/);
    expect(make({ nodes: 4 }).defaultImage.manifest).toBe(w.defaultImage.manifest);
  });

  it('starts booted and configured when asked', () => {
    const w = make({ nodes: 4, initial: { booted: { token: 'tok-1' }, desiredConfig: 'compute-cfg' } });
    const n = w.node('x1000c0s0b0n0')!;
    expect(n.power).toBe('on');
    expect(n.booted).toMatchObject({ kernel: w.defaultImage.kernel, token: 'tok-1' });
    expect(w.bss.get(n.id)!.token).toBe('tok-1');
    expect(w.cfs.status(n.id)).toBe('configured');
    const off = make({ nodes: 2, initial: { power: 'on' } });
    expect(off.node('x1000c0s0b0n0')!.power).toBe('on');
    expect(off.node('x1000c0s0b0n0')!.booted).toBeUndefined();
  });
});
