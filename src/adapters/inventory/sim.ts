/** InventoryPort over the simulated world (HSM semantics: unknown ids omitted, input ids normalised). */
import { canonicalXname } from '../../domain/xname.ts';
import type { SimWorld } from '../../sim/world.ts';
import type { SimNode } from '../../sim/types.ts';
import { EP, chunks, type SettingsRef } from '../common.ts';
import type { InventoryGroup, InventoryNode, InventoryPort } from '../ports.ts';

export function inventoryNode(n: SimNode): InventoryNode {
  return { id: n.id, role: n.role, subRole: n.subRole, arch: n.arch, enabled: n.enabled, nid: n.nid };
}

export class SimInventory implements InventoryPort {
  constructor(
    private readonly world: SimWorld,
    private readonly settings: SettingsRef,
  ) {}

  private enter(endpoint: string) {
    return this.world.enter('hsm', endpoint, this.settings.timeoutMs('hsm'));
  }

  async listNodes(): Promise<InventoryNode[]> {
    await this.enter(EP.hsmComponents);
    return [...this.world.nodes.values()].map(inventoryNode);
  }

  async queryNodes(ids: string[], opts: { enabledOnly?: boolean } = {}): Promise<InventoryNode[]> {
    const out: InventoryNode[] = [];
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      await this.enter(EP.hsmQuery);
      const seen = new Set<string>();
      for (const raw of chunk) {
        const n = this.world.node(canonicalXname(raw));
        if (!n || seen.has(n.id) || (opts.enabledOnly && !n.enabled)) continue;
        seen.add(n.id);
        out.push(inventoryNode(n));
      }
    }
    return out;
  }

  async groups(): Promise<InventoryGroup[]> {
    await this.enter(EP.hsmGroups);
    return [...this.world.groups].map(([label, members]) => ({ label, members: members.slice() }));
  }

  async partitions(): Promise<InventoryGroup[]> {
    await this.enter(EP.hsmPartitions);
    return [...this.world.partitions].map(([label, members]) => ({ label, members: members.slice() }));
  }

  async lockedNodes(): Promise<string[]> {
    await this.enter(EP.hsmLocks);
    return [...this.world.nodes.values()].filter((n) => n.locked).map((n) => n.id);
  }
}
