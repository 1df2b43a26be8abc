/**
 * The BMC SSH host key pin on node_inventory (db/node-inventory.ts): the first pin holds, a later one
 * does not replace it; a pin for an address the node no longer has is not stored; registering or
 * inspecting the node again keeps the pin while the BMC address stays and clears it when it changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { nodeRow } from '../helpers/inventory.ts';
import { emptyHardware } from '../../src/domain/hardware.ts';
import { listNodes, pinBmcHostKey, storeInspections, upsertNodes } from '../../src/db/node-inventory.ts';

const ID = 'x3000c0s9b0n0';
const MAC = '52:54:00:00:39:01';
const AT = 'https://10.0.0.9/redfish/v1/Systems/1';
const bmc = (address: string) => ({ bmcDriver: 'redfish' as const, bmcAddress: address, bmcUsername: 'root', bmcSecret: 'sealed' });
let db: TestDb;
const pin = async () => (await listNodes(db.db, [ID]))[0]!.bmcHostKey;
const inspect = (address: string) =>
  storeInspections(db.db, [
    {
      id: ID,
      mac: MAC,
      bmcDriver: 'redfish',
      bmcAddress: address,
      hardware: emptyHardware('redfish'),
      role: 'Compute',
      arch: 'X86',
      groups: [],
    },
  ]);

beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  await db?.drop();
});

describe('the BMC host key pin', () => {
  it('keeps the first pin, and stores none for an address the node no longer has', async () => {
    await upsertNodes(db.db, [nodeRow(ID, MAC, bmc(AT))]);
    expect(await pin()).toBe('');
    expect(await pinBmcHostKey(db.db, ID, AT, 'SHA256:first')).toBe('SHA256:first');
    expect(await pinBmcHostKey(db.db, ID, AT, 'SHA256:second')).toBe('SHA256:first');
    expect(await pinBmcHostKey(db.db, ID, 'https://10.0.0.99/redfish/v1/Systems/1', 'SHA256:other')).toBe('');
    expect(await pin()).toBe('SHA256:first');
  });

  it('stays through a registration or an inspection at the same address, and goes with another', async () => {
    await upsertNodes(db.db, [nodeRow(ID, MAC, { ...bmc(AT), role: 'Application' })]);
    expect(await pin()).toBe('SHA256:first');
    await inspect(AT);
    expect(await pin()).toBe('SHA256:first');

    await upsertNodes(db.db, [nodeRow(ID, MAC, bmc('https://10.0.1.9/redfish/v1/Systems/1'))]);
    expect(await pin()).toBe('');
    await pinBmcHostKey(db.db, ID, 'https://10.0.1.9/redfish/v1/Systems/1', 'SHA256:new');
    await inspect('https://10.0.2.9/redfish/v1/Systems/1');
    expect(await pin()).toBe('');
  });
});
