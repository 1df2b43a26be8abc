/**
 * Registering nodes: check the drafts (domain/node-registration.ts), seal BMC passwords with the
 * operator's key, store. One path for the API, the CLI and YAML files (both go through the API). A
 * password given without a configured key is refused rather than stored in the clear; a MAC that
 * another node holds is refused naming the field.
 */
import type { Db } from '../../db/client.ts';
import { nodesByMacs, upsertNodes, type NodeInventoryRow } from '../../db/node-inventory.ts';
import { checkNodeDrafts } from '../../domain/node-registration.ts';
import { fail, ok, type Checked } from '../../domain/validation.ts';
import type { NodeDiscovery } from './discovery.ts';
import { seal } from './secrets.ts';

export class NodeRegistry {
  /** `discovery`: the API's discovery and re-inspection (absent: those mutations answer FAILED_PRECONDITION). */
  constructor(
    private readonly secretKey: Buffer | undefined,
    readonly discovery?: NodeDiscovery,
  ) {}

  async register(db: Db, drafts: unknown[]): Promise<Checked<NodeInventoryRow[]>> {
    const checked = checkNodeDrafts(drafts);
    if (!checked.ok) return checked;
    const nodes = checked.value;
    const missingKey = nodes.findIndex((n) => n.bmc.password && !this.secretKey);
    if (missingKey >= 0) {
      return fail([{ field: `nodes[${missingKey}].bmc.password`, message: 'cannot be stored: the server has no BOOTORCH_SECRET_KEY' }]);
    }
    const holders = new Map(
      (
        await nodesByMacs(
          db,
          nodes.map((n) => n.mac),
        )
      ).map((r) => [r.mac, r.id]),
    );
    const taken = nodes.flatMap((n, i) => {
      const holder = holders.get(n.mac);
      return holder && holder !== n.xname ? [{ field: `nodes[${i}].mac`, message: `is registered to ${holder}` }] : [];
    });
    if (taken.length) return fail(taken);
    const rows = await upsertNodes(
      db,
      nodes.map((n) => ({
        id: n.xname,
        hostname: n.hostname,
        mac: n.mac,
        arch: n.arch,
        role: n.role,
        subRole: n.subRole,
        groups: n.groups,
        enabled: n.enabled,
        locked: n.locked,
        bmcDriver: n.bmc.driver,
        bmcAddress: n.bmc.address,
        bmcUsername: n.bmc.username,
        bmcSecret: n.bmc.password ? seal(this.secretKey!, n.xname, n.bmc.password) : '',
      })),
    );
    return ok(rows);
  }
}
