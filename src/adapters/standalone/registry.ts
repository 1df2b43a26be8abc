/**
 * Registering nodes: check the drafts (domain/node-registration.ts), seal BMC passwords with the
 * operator's key, store. One path for the API, the CLI and YAML files. A password given without a
 * configured key is refused rather than stored in the clear.
 */
import type { Db } from '../../db/client.ts';
import { upsertNodes, type NodeInventoryRow } from '../../db/node-inventory.ts';
import { checkNodeDrafts } from '../../domain/node-registration.ts';
import { fail, ok, type Checked } from '../../domain/validation.ts';
import { seal } from './secrets.ts';

export async function registerNodes(db: Db, secretKey: Buffer | undefined, drafts: unknown[]): Promise<Checked<NodeInventoryRow[]>> {
  const checked = checkNodeDrafts(drafts);
  if (!checked.ok) return checked;
  const missingKey = checked.value.findIndex((n) => n.bmc.password && !secretKey);
  if (missingKey >= 0) {
    return fail([{ field: `nodes[${missingKey}].bmc.password`, message: 'cannot be stored: the server has no BOOTORCH_SECRET_KEY' }]);
  }
  const rows = await upsertNodes(db, checked.value.map((n) => ({
    id: n.xname, hostname: n.hostname, mac: n.mac, arch: n.arch, role: n.role, subRole: n.subRole, groups: n.groups,
    enabled: n.enabled, locked: n.locked, bmcDriver: n.bmc.driver, bmcAddress: n.bmc.address, bmcUsername: n.bmc.username,
    bmcSecret: n.bmc.password ? seal(secretKey!, n.xname, n.bmc.password) : '',
  })));
  return ok(rows);
}
