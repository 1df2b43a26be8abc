/**
 * Sets larger than PostgreSQL's 65,535 bind parameters per statement: every db/ function that takes a
 * list of ids or rows must send it as one array parameter or in chunks (src/db/sql.ts), never one
 * parameter per value. Seen: a 100,000-node session whose setup failed on `delete ... in ($1, ..., $100000)`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { deploysOf, moveDeploys, setDeploys } from '../../src/db/deploys.ts';
import { findApiTokens } from '../../src/db/tokens.ts';
import { replaceTenantXnames, tenantXnames } from '../../src/db/tenants.ts';
import { listNodes, nodesByMacs, setBootParameters, upsertNodes, type NodeRegistration } from '../../src/db/node-inventory.ts';
import { transaction } from '../../src/db/tx.ts';
import type { DeployRecord } from '../../src/domain/deploy.ts';
import { nodeRow } from '../helpers/inventory.ts';

let db: TestDb;
beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  await db?.drop();
});

/** More ids than one statement may bind. */
const MANY = 70_000;
const xname = (i: number) => `x${1000 + Math.floor(i / 512)}c0s${Math.floor(i / 8) % 64}b0n${i % 8}`;
const ids = Array.from({ length: MANY }, (_, i) => xname(i));
const spec: DeployRecord = { image: { url: 'http://images/rhel.qcow2', format: 'qcow2', checksum: 'sha256:00' } };

async function count(query: ReturnType<typeof sql>): Promise<number> {
  const r = await db.db.execute<{ n: number }>(query);
  return Number(r.rows[0]!.n);
}

describe('more values than a statement can bind', () => {
  test('setDeploys, deploysOf and moveDeploys with 70,000 nodes', async () => {
    // Every node deploys first (70,000 rows inserted), then only every third: the rest lose theirs.
    await transaction(db.db, (tx) =>
      setDeploys(
        tx,
        { name: 's1', tenantKey: '' },
        ids.map((id) => ({ id, deploy: spec })),
      ),
    );
    expect(await count(sql`select count(*)::int as n from component_deploys where session = 's1'`)).toBe(MANY);
    await transaction(db.db, (tx) =>
      setDeploys(
        tx,
        { name: 's2', tenantKey: '' },
        ids.map((id, i) => (i % 3 === 0 ? { id, deploy: spec } : { id })),
      ),
    );
    const deploying = ids.filter((_, i) => i % 3 === 0);
    expect(await count(sql`select count(*)::int as n from component_deploys`)).toBe(deploying.length);
    expect(await count(sql`select count(*)::int as n from component_deploys where session = 's2' and state = 'pending'`)).toBe(
      deploying.length,
    );

    const found = await deploysOf(db.db, ids);
    expect(found.size).toBe(deploying.length);
    expect(found.get(ids[0]!)?.spec).toEqual(spec);

    const moved = await moveDeploys(db.db, ids, { state: 'starting', heartbeat: true }, ['pending']);
    expect(moved.length).toBe(deploying.length);
  });

  test('findApiTokens with 70,000 ids', async () => {
    await db.db.execute(sql`insert into api_tokens (id, hash, role, subject)
      select 't' || g, 'h' || g, 'node', 'n' || g from generate_series(1, 60000) g`);
    const wanted = Array.from({ length: MANY }, (_, i) => `t${i + 1}`);
    const rows = await findApiTokens(db.db, wanted);
    expect(rows.length).toBe(60_000);
  });

  test("a tenant's 40,000 xnames replaced in one transaction", async () => {
    const xnames = ids.slice(0, 40_000);
    const r = await transaction(db.db, (tx) => replaceTenantXnames(tx, 'acme', xnames));
    expect(r).toEqual({ ok: true });
    expect((await tenantXnames(db.db, 'acme')).size).toBe(40_000);
    // Another tenant asking for all 70,000 is refused for the 40,000 acme owns, and writes nothing.
    const refused = await transaction(db.db, (tx) => replaceTenantXnames(tx, 'other', ids));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.taken.length).toBe(40_000);
    expect((await tenantXnames(db.db, 'other')).size).toBe(0);
  });

  test('upsertNodes with 6,000 nodes, then node-inventory lookups by 70,000 ids', async () => {
    const mac = (i: number) =>
      `02:00:00:${((i >> 16) & 255).toString(16).padStart(2, '0')}:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
    const nodes: NodeRegistration[] = ids.slice(0, 6000).map((id, i) =>
      nodeRow(id, mac(i), {
        hostname: `nid${i}`,
        groups: ['compute'],
        bmcDriver: 'ipmi',
        bmcAddress: `10.0.${i >> 8}.${i & 255}`,
        bmcUsername: 'root',
        bmcSecret: 'sealed',
      }),
    );
    const written = await upsertNodes(db.db, nodes);
    expect(written.length).toBe(6000);
    // Again without a secret: the stored one stays, nothing is added.
    const again = await upsertNodes(
      db.db,
      nodes.map((n) => ({ ...n, hostname: `h-${n.id}`, bmcSecret: '' })),
    );
    expect(again.length).toBe(6000);
    expect(await count(sql`select count(*)::int as n from node_inventory where bmc_secret = 'sealed' and hostname like 'h-%'`)).toBe(6000);

    expect((await listNodes(db.db, ids)).length).toBe(6000);
    expect(
      (
        await nodesByMacs(
          db.db,
          Array.from({ length: MANY }, (_, i) => mac(i)),
        )
      ).length,
    ).toBe(6000);
    const set = await setBootParameters(db.db, ids, { kernel: 'k', initrd: 'i', params: 'p', token: 'tok' });
    expect(set.length).toBe(6000);
  });
});
