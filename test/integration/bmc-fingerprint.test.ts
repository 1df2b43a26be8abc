/**
 * The inventory's BMC fingerprint (src/db/node-inventory.ts bmcsFingerprint), what console capture
 * reads every round instead of the whole inventory: it changes when a node with a reachable BMC comes
 * or goes or its BMC driver, address, user or secret changes; not when its boot parameters, power-on
 * time or host key pin change (those happen on every boot, and the capture writes the pin itself).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { bmcsFingerprint, listBmcs } from '../../src/db/node-inventory.ts';

let db: TestDb;
const q = (sql: string, args: unknown[] = []) => db.pool.query(sql, args);

beforeAll(async () => {
  db = await freshDb();
  for (let i = 0; i < 3; i++)
    await q(
      `insert into node_inventory (id, mac, bmc_driver, bmc_address, bmc_username, bmc_secret) values ($1, $2, 'redfish', $3, 'root', 'sealed')`,
      [`x5000c0s${i}b0n0`, `52:54:02:00:00:0${i}`, `https://10.0.0.${i}/redfish/v1/Systems/1`],
    );
  await q(`insert into node_inventory (id, mac) values ('x5000c0s9b0n0', '52:54:02:00:00:09')`);
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('bmcsFingerprint', () => {
  it('is stable while nothing about a BMC changes, whatever else does', async () => {
    const f = await bmcsFingerprint(db.db);
    expect(f).toMatch(/^3:/);
    await q(`update node_inventory set boot_set_at = now(), boot_kernel = 'vmlinuz', bmc_host_key = 'SHA256:x', updated_at = now()`);
    expect(await bmcsFingerprint(db.db)).toBe(f);
    expect((await listBmcs(db.db)).map((r) => r.id)).toEqual(['x5000c0s0b0n0', 'x5000c0s1b0n0', 'x5000c0s2b0n0']);
  });

  it.each([
    ['address', `update node_inventory set bmc_address = 'https://10.0.9.9/redfish/v1/Systems/1' where id = 'x5000c0s1b0n0'`],
    ['user', `update node_inventory set bmc_username = 'admin' where id = 'x5000c0s1b0n0'`],
    ['secret', `update node_inventory set bmc_secret = 'resealed' where id = 'x5000c0s1b0n0'`],
    ['driver', `update node_inventory set bmc_driver = 'ipmi' where id = 'x5000c0s1b0n0'`],
    [
      'a node gains a BMC',
      `update node_inventory set bmc_driver = 'ipmi', bmc_address = '10.0.0.9', bmc_secret = 's' where id = 'x5000c0s9b0n0'`,
    ],
    ['a node goes', `delete from node_inventory where id = 'x5000c0s0b0n0'`],
  ])('changes when a BMC %s changes', async (_what, change) => {
    const before = await bmcsFingerprint(db.db);
    await q(change);
    expect(await bmcsFingerprint(db.db)).not.toBe(before);
  });
});
