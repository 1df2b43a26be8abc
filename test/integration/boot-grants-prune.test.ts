/**
 * Pruning ended boot grants and spent node credentials (src/db/boot-grants.ts), off the boot
 * endpoints' path: at 20,000 rows each, both prune statements read their rows from indexes (EXPLAIN),
 * not the whole table; an exchange neither waits for the prune it starts nor starts one more than once
 * a minute (the pruner's clock is injected); and a grant whose window and ticket have ended reads, to
 * the exchange, the boot script and iPXE's failure reports, as if it were already pruned. A prune that
 * fails (here a lock timeout) is one warn line on the pruner's logger, and its rows go with a later one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { newAttemptId, newTicket } from '../../src/auth/boot-tickets.ts';
import { BootGrantPruner, mintBootTicket, openAttempt, pruneBootGrants, pruneStatements } from '../../src/db/boot-grants.ts';
import { setDeploys } from '../../src/db/deploys.ts';
import { exchangeTicket } from '../../src/api/boot/exchange.ts';
import { connect } from '../../src/db/client.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { logLines } from '../helpers/log-lines.ts';

const N = 20_000;
const MIN = 60_000;
let db: TestDb;

beforeAll(async () => {
  db = await freshDb();
}, 120_000);
afterAll(async () => {
  await db?.drop();
});

const count = async (q: string, args: unknown[] = []) => Number((await db.pool.query(q, args)).rows[0].n);

/** A grant of node `node` with a live ticket (returned), or an ended one (window and ticket past). */
async function grant(node: string, o: { ended?: boolean; purpose?: string } = {}): Promise<string> {
  const { ticket, hash } = newTicket();
  const ends = o.ended ? `now() - interval '1 minute'` : `now() + interval '10 minutes'`;
  await db.pool.query(
    `insert into boot_grants (attempt, node, purpose, window_ends_at, ticket_hash, ticket_expires_at, created_at)
     values ($1, $2, $3, ${ends}, $4, ${ends}, now())`,
    [newAttemptId(), node, o.purpose ?? 'report', hash],
  );
  return ticket;
}

/** The plan's nodes, flattened: node type, relation and index. */
async function plan(statement: SQL): Promise<Array<{ type: string; relation?: string; index?: string }>> {
  const r = await db.db.execute(sql`explain (format json) ${statement}`);
  const out: Array<{ type: string; relation?: string; index?: string }> = [];
  const walk = (p: Record<string, unknown>) => {
    out.push({ type: String(p['Node Type']), relation: p['Relation Name'] as string, index: p['Index Name'] as string });
    for (const c of (p.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk((r.rows[0] as { 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> })['QUERY PLAN'][0]!.Plan);
  return out;
}

describe('at 20,000 grants and 20,000 node credentials', () => {
  beforeAll(async () => {
    // 1 in 100 grants ended; 1 in 150 credentials expired, 1 in 200 revoked; a provisioned (unscoped) one in 97.
    await db.pool.query(`
      insert into boot_grants (attempt, node, purpose, window_ends_at, ticket_hash, ticket_expires_at, created_at)
      select 'a' || g, 'x' || g, 'report', now() + case when g % 100 = 0 then interval '-1 hour' else interval '30 minutes' end,
        md5(g::text), now() + case when g % 100 = 0 then interval '-1 hour' else interval '10 minutes' end, now()
      from generate_series(1, ${N}) g`);
    await db.pool.query(`
      insert into api_tokens (id, hash, role, subject, expires_at, revoked_at, scope)
      select 't' || g, md5('t' || g), 'node', 'x' || g,
        now() + case when g % 150 = 0 then interval '-1 hour' else interval '1 hour' end,
        case when g % 200 = 0 then now() end, case when g % 97 = 0 then null else 'report' end
      from generate_series(1, ${N}) g`);
    await db.pool.query('analyze boot_grants');
    await db.pool.query('analyze api_tokens');
  }, 120_000);

  it('each prune statement reads its rows from indexes, not the whole table', async () => {
    const q = pruneStatements(new Date(), 1000);
    const grants = await plan(q.grants);
    const tokens = await plan(q.tokens);
    expect(grants.filter((n) => n.type === 'Seq Scan')).toEqual([]);
    expect(tokens.filter((n) => n.type === 'Seq Scan')).toEqual([]);
    expect(grants.map((n) => n.index)).toContain('boot_grants_window_ends_idx');
    expect(tokens.map((n) => n.index)).toEqual(expect.arrayContaining(['api_tokens_ticket_expiry_idx', 'api_tokens_ticket_revoked_idx']));
  });

  it('and deletes exactly the ended grants and the spent scoped credentials', async () => {
    const ended = await count(`select count(*) n from boot_grants where window_ends_at <= now()`);
    const spent = await count(
      `select count(*) n from api_tokens where scope is not null and (expires_at <= now() or revoked_at is not null)`,
    );
    expect([ended, spent]).toEqual([200, 198]);
    expect(await pruneBootGrants(db.db, new Date(), 1000)).toEqual({ grants: ended, tokens: spent });
    expect(await count(`select count(*) n from boot_grants`)).toBe(N - ended);
    expect(await count(`select count(*) n from api_tokens`)).toBe(N - spent);
    await db.pool.query('truncate boot_grants, api_tokens');
  });
});

describe('pruning after an exchange', () => {
  it('the exchange does not wait for it, and it runs at most once a minute', async () => {
    let clock = 0;
    const pruner = new BootGrantPruner({ clock: () => clock });
    const exchange = (ticket: string) => exchangeTicket(db.db, ticket, { ttlSeconds: 60, pruner });
    const first = await grant('x1000c0s0b0n0', { ended: true });
    const live = await grant('x1000c0s1b0n0');

    // Another transaction holds the ended grant: a prune waits for it; the exchange must not.
    const holder = await db.pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from boot_grants where node = 'x1000c0s0b0n0' for update`);
      const answered = await Promise.race([
        exchange(live),
        new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 10_000).unref()),
      ]);
      expect(answered).toMatchObject({ ok: true, node: 'x1000c0s1b0n0' });
      expect(await count(`select count(*) n from boot_grants where node = 'x1000c0s0b0n0'`)).toBe(1);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    await pruner.idle();
    expect(await count(`select count(*) n from boot_grants where node = 'x1000c0s0b0n0'`)).toBe(0);
    expect(first).toMatch(/^btk_/);

    // Within the minute: no prune.
    await grant('x1000c0s2b0n0', { ended: true });
    clock += MIN - 1;
    expect((await exchange(await grant('x1000c0s3b0n0'))).ok).toBe(true);
    await pruner.idle();
    expect(await count(`select count(*) n from boot_grants where node = 'x1000c0s2b0n0'`)).toBe(1);
    // A minute on: the next exchange prunes.
    clock += 1;
    expect((await exchange(await grant('x1000c0s4b0n0'))).ok).toBe(true);
    await pruner.idle();
    expect(await count(`select count(*) n from boot_grants where node = 'x1000c0s2b0n0'`)).toBe(0);
  });

  it("a failed prune is one warn line with the database's error on the pruner's logger; its rows go with a later prune", async () => {
    const { lines, sink } = logLines();
    let clock = 0;
    const pruner = new BootGrantPruner({ clock: () => clock });
    pruner.logTo(createLogger({ level: 'info', role: 'api', pretty: false, destination: sink }));
    await grant('x4000c0s0b0n0', { ended: true });
    // A pool whose statements give up on a lock after 200 ms, as one under a lock_timeout would.
    const url = new URL(db.url);
    url.searchParams.set('options', '-c lock_timeout=200');
    const impatient = connect(url.toString(), { max: 1 });
    const holder = await db.pool.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from boot_grants where node = 'x4000c0s0b0n0' for update`);
      pruner.soon(impatient.db, new Date());
      await pruner.idle();
      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          msg: 'boot grant prune failed; ended grants and node credentials stay until a later prune',
          err: 'database error 55P03: canceling statement due to lock timeout',
        }),
      ]);
      expect(await count(`select count(*) n from boot_grants where node = 'x4000c0s0b0n0'`)).toBe(1);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    clock += MIN;
    pruner.soon(impatient.db, new Date());
    await pruner.idle();
    await impatient.close();
    expect(await count(`select count(*) n from boot_grants where node = 'x4000c0s0b0n0'`)).toBe(0);
    expect(lines).toHaveLength(1);
  });

  it('a prune goes on in batches until the ended rows are gone', async () => {
    const pruner = new BootGrantPruner({ batch: 7 });
    for (let i = 0; i < 20; i++) await grant(`x2000c0s${i}b0n0`, { ended: true });
    pruner.soon(db.db, new Date());
    await pruner.idle();
    expect(await count(`select count(*) n from boot_grants where node like 'x2000%'`)).toBe(0);
  });
});

describe('a grant whose window and ticket have ended, not yet pruned', () => {
  const pruner = new BootGrantPruner({ everyMs: Number.POSITIVE_INFINITY });
  beforeAll(() => {
    // Spend this pruner's one run, so nothing below is pruned.
    pruner.soon(db.db, new Date(0));
  });

  it('is refused at the exchange, as an unknown ticket, and stays until pruned', async () => {
    const ticket = await grant('x3000c0s1b0n0', { ended: true });
    expect(await exchangeTicket(db.db, ticket, { ttlSeconds: 60, pruner })).toEqual({
      ok: false,
      status: 401,
      message: 'boot ticket not accepted',
    });
    expect(await count(`select count(*) n from boot_grants where node = 'x3000c0s1b0n0'`)).toBe(1);
    expect(await count(`select count(*) n from api_tokens where subject = 'x3000c0s1b0n0'`)).toBe(0);
  });

  it("an installed system's ended disk ticket is refused as unknown, not told its deploy's state", async () => {
    const node = 'x3000c0s2b0n0';
    await setDeploys(db.db, { name: 's1', tenantKey: '' }, [
      { id: node, deploy: { image: { url: 'disk.img', format: 'raw', checksum: `sha256:${'0'.repeat(64)}` } } },
    ]);
    await db.pool.query(`update component_deploys set state = 'writing' where id = $1`, [node]);
    const ticket = await grant(node, { ended: true, purpose: 'disk' });
    expect(await exchangeTicket(db.db, ticket, { ttlSeconds: 60, pruner })).toMatchObject({ ok: false, status: 401 });
  });

  it('mints no boot script ticket, and is no open attempt for a failure report', async () => {
    const node = 'x3000c0s3b0n0';
    await db.pool.query(`insert into node_inventory (id, mac, boot_kernel) values ($1, '52:54:00:00:0b:03', 'vmlinuz')`, [node]);
    await grant(node, { ended: true });
    const { attempt } = (await db.pool.query(`select attempt from boot_grants where node = $1`, [node])).rows[0];
    const now = new Date();
    expect(
      await mintBootTicket(db.db, '52:54:00:00:0b:03', { hash: newTicket().hash, expiresAt: new Date(now.getTime() + MIN), now }),
    ).toBeUndefined();
    expect(await openAttempt(db.db, attempt, now)).toBeUndefined();
  });
});
