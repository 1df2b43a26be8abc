/**
 * Boot grants and the credentials minted from them expire and are pruned (src/db/boot-grants.ts):
 * grants whose window and ticket both ended go, and so do node tokens minted from tickets that expired
 * or were revoked; a provisioned node token (no scope) is an admin's and stays. A new power-on revokes
 * the credentials of the node's earlier attempts. When pruning runs, and what an ended grant reads as
 * before it does: boot-grants-prune.test.ts. The clock is injected: nothing waits for time to pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { StandaloneBootParams } from '../../src/adapters/standalone/boot-params.ts';
import { createNodeToken, verifyApiToken } from '../../src/auth/api-tokens.ts';
import { newAttemptId, newTicket } from '../../src/auth/boot-tickets.ts';
import { bootGrantPruner, issueTicket, pruneBootGrants } from '../../src/db/boot-grants.ts';
import { exchangeTicket } from '../../src/api/boot/exchange.ts';

let db: TestDb;
beforeAll(async () => {
  db = await freshDb();
  for (const i of [1, 2])
    await db.pool.query(`insert into node_inventory (id, mac) values ($1, $2)`, [`x3000c0s${i}b0n0`, `52:54:00:00:0a:0${i}`]);
});
afterAll(async () => {
  await db?.drop();
});

const HOUR = 3_600_000;
const rows = async (sql: string) => (await db.pool.query(sql)).rows;

describe('boot grants and their credentials', () => {
  it('are pruned once expired or revoked; a provisioned node token stays', async () => {
    const past = new Date(Date.now() - 3 * HOUR);
    // An hour-old window of node 1 (ended), and a ticket exchanged then (its credential expired since).
    const { ticket, hash } = newTicket();
    await issueTicket(db.db, 'x3000c0s1b0n0', 'report', {
      hash,
      now: past,
      expiresAt: new Date(past.getTime() + 600_000),
      attempt: newAttemptId(),
    });
    const old = await exchangeTicket(db.db, ticket, { ttlSeconds: 60, now: () => new Date(past.getTime() + 1000) });
    expect(old.ok).toBe(true);
    const provisioned = await createNodeToken(db.db, 'x3000c0s2b0n0', { ttlSeconds: 60, now: () => past });
    const live = await createNodeToken(db.db, 'x3000c0s2b0n0', { ttlSeconds: 3600, scope: 'deploy', revokeExisting: false });
    expect(await rows(`select scope from api_tokens order by scope nulls first`)).toHaveLength(3);

    await bootGrantPruner.idle();
    expect(await pruneBootGrants(db.db, new Date())).toEqual({ grants: 1, tokens: 1 });
    expect(await rows(`select node from boot_grants`)).toEqual([]);
    expect((await rows(`select id from api_tokens order by id`)).map((r) => r.id).sort()).toEqual(
      [provisioned.info.id, live.info.id].sort(),
    );
  });

  it("a new power-on revokes the credentials of the node's earlier attempts; a prune then removes them", async () => {
    const bss = new StandaloneBootParams(db.db);
    const before = await createNodeToken(db.db, 'x3000c0s2b0n0', { ttlSeconds: 3600, scope: 'report', revokeExisting: false });
    await bss.setBootParameters({ hosts: ['x3000c0s2b0n0'], kernel: 'k', initrd: '', params: '' });
    expect(await verifyApiToken(db.db, before.token)).toMatchObject({ failure: expect.stringMatching(/^(revoked|unknown-token)$/) });
    await bootGrantPruner.idle();
    await pruneBootGrants(db.db, new Date());
    expect(await verifyApiToken(db.db, before.token)).toMatchObject({ failure: 'unknown-token' });
    expect(await rows(`select scope from api_tokens where subject = 'x3000c0s2b0n0' and scope is not null`)).toEqual([]);
    expect(await rows(`select purpose from boot_grants where node = 'x3000c0s2b0n0'`)).toEqual([{ purpose: 'report' }]);
  });
});
