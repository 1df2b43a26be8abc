/** InventoryPort over bootorch's own node inventory (db/node-inventory.ts), with HSM's semantics. */
import { canonicalXname } from '../../domain/xname.ts';
import type { Db } from '../../db/client.ts';
import { listNodeSummaries, type NodeInventoryRow, type NodeSummary } from '../../db/node-inventory.ts';
import { matchesHardware, type HardwareTerm } from '../../domain/hardware-limit.ts';
import type { LimitInventory } from '../../domain/limit.ts';
import type { Arch, InventoryGroup, InventoryNode, InventoryPort } from '../ports.ts';

function toNode(r: NodeSummary): InventoryNode {
  return { id: r.id, role: r.role, subRole: r.subRole, arch: r.arch as Arch, enabled: r.enabled };
}

export class StandaloneInventory implements InventoryPort {
  constructor(private readonly db: Db) {}

  async listNodes(): Promise<InventoryNode[]> {
    return (await listNodeSummaries(this.db)).map(toNode);
  }

  /** Unknown ids omitted, input ids canonicalised, as HSM's query does. */
  async queryNodes(ids: string[], opts: { enabledOnly?: boolean } = {}): Promise<InventoryNode[]> {
    const rows = await listNodeSummaries(this.db, [...new Set(ids.map(canonicalXname))]);
    return rows.filter((r) => !opts.enabledOnly || r.enabled).map(toNode);
  }

  async groups(): Promise<InventoryGroup[]> {
    const groups = new Map<string, string[]>();
    for (const r of await listNodeSummaries(this.db)) {
      for (const g of r.groups) groups.set(g, [...(groups.get(g) ?? []), r.id]);
    }
    return [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([label, members]) => ({ label, members }));
  }

  /** No partitions in a standalone site. */
  async partitions(): Promise<InventoryGroup[]> {
    return [];
  }

  async lockedNodes(): Promise<string[]> {
    return (await listNodeSummaries(this.db)).filter((r) => r.locked).map((r) => r.id);
  }
}

/** Registered nodes as a limit expression's inventory: groups, roles, Role_SubRole and hardware terms. */
export function rowsLimitInventory(rows: NodeInventoryRow[]): LimitInventory {
  const names = new Map<string, Set<string>>();
  const add = (name: string, id: string) => names.set(name, (names.get(name) ?? new Set()).add(id));
  for (const r of rows) {
    for (const g of r.groups) add(g, r.id);
    if (r.role) add(r.role, r.id);
    if (r.role && r.subRole) add(`${r.role}_${r.subRole}`, r.id);
  }
  return {
    members: (name) => names.get(name),
    hardware: (term: HardwareTerm) => new Set(rows.filter((r) => matchesHardware(r.hardware, term)).map((r) => r.id)),
  };
}
