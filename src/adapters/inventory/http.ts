/**
 * HSM v2 client (csm-services §4.2): State/Components, the Query POST (chunked by
 * max_component_batch_size, never with empty ComponentIDs, which HSM answers with 400), groups,
 * partitions and lock status.
 */
import { z } from 'zod';
import { EP, chunks, type SettingsRef } from '../common.ts';
import type { ServiceClient } from '../http.ts';
import type { Arch, InventoryGroup, InventoryNode, InventoryPort } from '../ports.ts';

const component = z
  .object({
    ID: z.string(),
    Type: z.string().optional(),
    Role: z.string().optional(),
    SubRole: z.string().optional(),
    Arch: z.string().optional(),
    Enabled: z.boolean().optional(),
    NID: z.number().optional(),
  })
  .passthrough();
const componentArray = z.object({ Components: z.array(component).nullish() }).passthrough();
const members = z
  .object({ ids: z.array(z.string()).nullish() })
  .passthrough()
  .nullish();
const groups = z.array(z.object({ label: z.string(), members }).passthrough()).nullable();
const partitions = z.array(z.object({ name: z.string(), members }).passthrough()).nullable();
const locks = z
  .object({
    Components: z.array(z.object({ ID: z.string(), Locked: z.boolean().optional() }).passthrough()).nullish(),
  })
  .passthrough();

function toNode(c: z.infer<typeof component>): InventoryNode {
  const arch: Arch = c.Arch === 'X86' || c.Arch === 'ARM' || c.Arch === 'Other' ? c.Arch : 'Unknown';
  // HSM always sends Enabled for nodes; a record without it has never been disabled.
  return { id: c.ID, role: c.Role ?? '', subRole: c.SubRole ?? '', arch, enabled: c.Enabled ?? true, nid: c.NID };
}

export class HttpInventory implements InventoryPort {
  constructor(
    private readonly http: ServiceClient,
    private readonly settings: SettingsRef,
  ) {}

  async listNodes(): Promise<InventoryNode[]> {
    const r = await this.http.request({
      endpoint: EP.hsmComponents,
      method: 'GET',
      path: '/hsm/v2/State/Components',
      query: { type: 'Node' },
      schema: componentArray,
    });
    return (r.data.Components ?? []).map(toNode);
  }

  async queryNodes(ids: string[], opts: { enabledOnly?: boolean } = {}): Promise<InventoryNode[]> {
    const out: InventoryNode[] = [];
    for (const chunk of chunks(ids, this.settings.current.maxBatchSize)) {
      const body: Record<string, unknown> = { ComponentIDs: chunk };
      if (opts.enabledOnly) body.enabled = ['True'];
      const r = await this.http.request({
        endpoint: EP.hsmQuery,
        method: 'POST',
        path: '/hsm/v2/State/Components/Query',
        body,
        schema: componentArray,
      });
      out.push(...(r.data.Components ?? []).map(toNode));
    }
    return out;
  }

  async groups(): Promise<InventoryGroup[]> {
    const r = await this.http.request({ endpoint: EP.hsmGroups, method: 'GET', path: '/hsm/v2/groups', schema: groups });
    return (r.data ?? []).map((g) => ({ label: g.label, members: g.members?.ids ?? [] }));
  }

  async partitions(): Promise<InventoryGroup[]> {
    const r = await this.http.request({ endpoint: EP.hsmPartitions, method: 'GET', path: '/hsm/v2/partitions', schema: partitions });
    return (r.data ?? []).map((p) => ({ label: p.name, members: p.members?.ids ?? [] }));
  }

  async lockedNodes(): Promise<string[]> {
    const r = await this.http.request({
      endpoint: EP.hsmLocks,
      method: 'GET',
      path: '/hsm/v2/locks/status',
      query: { type: 'Node', locked: 'true' },
      schema: locks,
    });
    return (r.data.Components ?? []).filter((c) => c.Locked !== false).map((c) => c.ID);
  }
}
