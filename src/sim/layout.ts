/**
 * The machine's shape, laid out like an HPE Cray EX system (architecture.md, "A realistic simulated
 * machine"): liquid-cooled cabinets x1000, x1001, ... of 8 chassis x 8 slots x 2 node cards x 2 nodes
 * (256 compute nodes each), and an optional air-cooled River cabinet x3000 with one management or
 * user-access node per slot. ARM is chosen per blade (slot), as real blades are all one arch.
 */
import { fnv1a, mulberry32 } from './random.ts';
import type { SimNode } from './types.ts';

export interface RiverLayout {
  masters?: number;
  workers?: number;
  storage?: number;
  uans?: number;
}

export interface LayoutOptions {
  /** Compute nodes in Mountain cabinets (default 256). */
  nodes?: number;
  /** Fraction of compute blades that are ARM (default 0). */
  armFraction?: number;
  /** Add River cabinet x3000 with management and UAN nodes (true = 3 masters, 3 workers, 3 storage, 2 UANs). */
  river?: boolean | RiverLayout;
  /** First Mountain cabinet number (default 1000). */
  firstCabinet?: number;
}

export interface Layout {
  nodes: SimNode[];
  groups: Map<string, string[]>;
  partitions: Map<string, string[]>;
}

const EPOCH = '1970-01-01T00:00:00.000000000Z';

export function buildLayout(seed: number, o: LayoutOptions = {}): Layout {
  const total = o.nodes ?? 256;
  const armFraction = o.armFraction ?? 0;
  const first = o.firstCabinet ?? 1000;
  const rand = mulberry32(fnv1a(`layout:${seed}`));
  const nodes: SimNode[] = [];
  const groups = new Map<string, string[]>();
  const add = (label: string, id: string) => {
    const g = groups.get(label) ?? [];
    g.push(id);
    groups.set(label, g);
  };
  groups.set('blade-x86', []);
  groups.set('blade-arm', []);

  let nid = 1;
  outer: for (let cab = first; ; cab++) {
    for (let c = 0; c < 8; c++) {
      for (let s = 0; s < 8; s++) {
        // One draw per blade, even when the fraction is 0, so changing it does not reshuffle the rest.
        const arm = rand() < armFraction;
        for (let b = 0; b < 2; b++) {
          for (let n = 0; n < 2; n++) {
            if (nodes.length >= total) break outer;
            const id = `x${cab}c${c}s${s}b${b}n${n}`;
            nodes.push(node(id, nid++, 'Compute', '', arm ? 'ARM' : 'X86', 'Mountain'));
            add(`cab-x${cab}`, id);
            add(arm ? 'blade-arm' : 'blade-x86', id);
          }
        }
      }
    }
  }
  const compute = nodes.map((n) => n.id);
  const half = Math.ceil(compute.length / 2);
  groups.set('compute-a', compute.slice(0, half));
  groups.set('compute-b', compute.slice(half));
  const partitions = new Map<string, string[]>([['p1', compute.slice()]]);

  if (o.river) {
    const r: RiverLayout = o.river === true ? {} : o.river;
    const kinds: [string, string, number][] = [
      ['Management', 'Master', r.masters ?? 3],
      ['Management', 'Worker', r.workers ?? 3],
      ['Management', 'Storage', r.storage ?? 3],
      ['Application', 'UAN', r.uans ?? 2],
    ];
    // NCN/UAN NIDs sit far above compute NIDs, as on real systems.
    let slot = 1;
    let riverNid = 100_001;
    for (const [role, subRole, count] of kinds) {
      for (let i = 0; i < count; i++) {
        const id = `x3000c0s${slot++}b0n0`;
        nodes.push(node(id, riverNid++, role, subRole, 'X86', 'River'));
        add('cab-x3000', id);
        add('blade-x86', id);
      }
    }
  }
  return { nodes, groups, partitions };
}

function node(id: string, nid: number, role: string, subRole: string, arch: 'X86' | 'ARM', cls: 'Mountain' | 'River'): SimNode {
  return {
    id,
    nid,
    role,
    subRole,
    arch,
    class: cls,
    enabled: true,
    locked: false,
    power: 'off',
    hsmState: 'Off',
    powerUpdated: EPOCH,
    generation: 0,
  };
}
