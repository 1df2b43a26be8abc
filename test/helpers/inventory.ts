/** A node's inventory row for upsertNodes in tests: a compute node with no BMC, changed by `o`. */
import type { NodeRegistration } from '../../src/db/node-inventory.ts';

export function nodeRow(id: string, mac: string, o: Partial<NodeRegistration> = {}): NodeRegistration {
  return {
    id,
    hostname: '',
    mac,
    arch: 'X86',
    role: 'Compute',
    subRole: '',
    groups: [],
    enabled: true,
    locked: false,
    bmcDriver: 'none',
    bmcAddress: '',
    bmcUsername: '',
    bmcSecret: '',
    ...o,
  };
}
