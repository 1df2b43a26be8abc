/**
 * Node credentials in bulk (createNodeTokens, `bootorch token nodes --registered`): every node's earlier
 * tokens revoked, each new token valid only for its own node, across several transactions' worth of nodes.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { withDatabase } from '../helpers/global-setup.ts';
import { runCli } from '../helpers/processes.ts';
import {
  assertNodeMayReport,
  createNodeToken,
  createNodeTokens,
  isAuthFailure,
  NODE_TOKENS_PER_TRANSACTION,
  verifyApiToken,
} from '../../src/auth/index.ts';
import { upsertNodes } from '../../src/db/node-inventory.ts';
import { nodeRow } from '../helpers/inventory.ts';

let t: TestDb;
let dir: string;
beforeAll(async () => {
  t = await freshDb();
  dir = await mkdtemp(path.join(tmpdir(), 'bootorch-node-tokens-'));
});
afterAll(async () => {
  await t?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const xnames = (n: number, cabinet = 1000) =>
  Array.from({ length: n }, (_, i) => `x${cabinet}c${i % 8}s${Math.floor(i / 32)}b0n${(i >> 3) % 4}`);

/** Registers these nodes (a site without CSM), each with its own MAC (its cabinet's number in it). */
async function register(ids: string[]): Promise<void> {
  await upsertNodes(
    t.db,
    ids.map((id, i) =>
      nodeRow(
        id,
        `02:00:00:${(Number(/^x(\d+)/.exec(id)![1]) % 256).toString(16).padStart(2, '0')}:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
        { hostname: `n${i}` },
      ),
    ),
  );
}

async function failureOf(token: string): Promise<string> {
  const p = await verifyApiToken(t.db, token);
  return isAuthFailure(p) ? p.failure : 'ok';
}

describe('createNodeTokens', () => {
  it('revokes every earlier token of each node, and each new token speaks only for its own node', async () => {
    const n = 2 * NODE_TOKENS_PER_TRANSACTION + 37;
    const ids = xnames(n);
    expect(new Set(ids).size).toBe(n);
    // Earlier credentials: a provisioned one for every third node, a scoped one (boot exchange) for every fifth.
    const earlier = [
      ...(await createNodeTokens(
        t.db,
        ids.filter((_, i) => i % 3 === 0),
      )),
      ...(await createNodeTokens(
        t.db,
        ids.filter((_, i) => i % 5 === 0),
        { scope: 'deploy', revokeExisting: false },
      )),
    ];
    const bystander = await createNodeToken(t.db, 'x2000c0s0b0n0');

    const issued = await createNodeTokens(t.db, ids);
    expect(issued.map((x) => x.info.subject)).toEqual(ids);
    for (const e of earlier) expect(await failureOf(e.token)).toBe('revoked');
    expect(await failureOf(bystander.token)).toBe('ok');
    for (const [i, x] of issued.entries()) {
      const p = await verifyApiToken(t.db, x.token);
      if (isAuthFailure(p)) throw new Error(`${ids[i]}: ${p.message}`);
      expect(p.node).toBe(ids[i]);
      expect(() => assertNodeMayReport(p, ids[(i + 1) % n]!)).toThrow(/may not report/);
    }
    const live = await t.pool.query<{ subject: string; n: string }>(
      `select subject, count(*) as n from api_tokens where role = 'node' and revoked_at is null and subject = any($1) group by subject`,
      [ids],
    );
    expect(live.rows.length).toBe(n);
    expect(live.rows.every((r) => r.n === '1')).toBe(true);
    // What a database dump holds: SHA-256 of the token, never the secret.
    const stored = await t.pool.query(`select * from api_tokens where id = any($1)`, [issued.map((x) => x.info.id)]);
    expect(stored.rows.length).toBe(n);
    const byId = new Map(issued.map((x) => [x.info.id, x.token]));
    for (const row of stored.rows) {
      const token = byId.get(row.id)!;
      expect(row.hash).toBe(createHash('sha256').update(token).digest('hex'));
      expect(JSON.stringify(row)).not.toContain(token.slice(21));
    }
  });

  it('refuses a name that is not an xname, or a node given twice, naming it, and issues nothing', async () => {
    const before = (await t.pool.query(`select count(*)::int as n from api_tokens`)).rows[0].n;
    await expect(createNodeTokens(t.db, ['x3000c0s0b0n0', 'nid000001'])).rejects.toThrow(/\[1\].*not a valid xname/);
    await expect(createNodeTokens(t.db, ['x3000c0s0b0n0', 'X3000C0S0B0N0'])).rejects.toThrow(/x3000c0s0b0n0 is given twice/);
    expect((await t.pool.query(`select count(*)::int as n from api_tokens`)).rows[0].n).toBe(before);
  });
});

describe('bootorch token nodes --registered', () => {
  it('writes one 0600 file per registered node and a JSON file; a second run revokes the first', async () => {
    const ids = xnames(40, 3100);
    await register(ids);
    const env = { DATABASE_URL: withDatabase(inject('adminUrl'), t.name) };
    const out = path.join(dir, 'tokens');
    const json = path.join(dir, 'tokens.json');
    const first = await runCli(['token', 'nodes', '--registered', '--out', out, '--json-file', json], env);
    expect(first.stderr).toContain('issued 40 node tokens for the node registry');
    expect(first.code).toBe(0);
    const byJson = JSON.parse(await readFile(json, 'utf8')) as Record<string, string>;
    expect(Object.keys(byJson)).toEqual([...ids].sort());
    for (const id of ids) {
      const file = path.join(out, id);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const token = (await readFile(file, 'utf8')).trim();
      expect(token).toBe(byJson[id]);
      const p = await verifyApiToken(t.db, token);
      if (isAuthFailure(p)) throw new Error(p.message);
      expect(p.node).toBe(id);
    }
    expect((await stat(json)).mode & 0o777).toBe(0o600);

    const second = await runCli(['token', 'nodes', '--registered', '--json-file', json], env);
    expect(second.code).toBe(0);
    const again = JSON.parse(await readFile(json, 'utf8')) as Record<string, string>;
    for (const id of ids) {
      expect(await failureOf(byJson[id]!)).toBe('revoked');
      expect(await failureOf(again[id]!)).toBe('ok');
    }
  });

  it('writes the files of every chunk stored before a failure, and none of the chunk that failed', async () => {
    await register(xnames(NODE_TOKENS_PER_TRANSACTION + 5, 3200));
    const all = (await t.pool.query<{ id: string }>(`select id from node_inventory order by id`)).rows.map((r) => r.id);
    const last = all.at(-1)!;
    // The second chunk's statement fails (the last node's insert is refused), the first is stored.
    await t.pool.query(`create function refuse_one() returns trigger language plpgsql as $$
      begin raise exception 'refused for the test: %', new.subject; end $$`);
    await t.pool.query(`create trigger refuse_one before insert on api_tokens for each row
      when (new.subject = '${last}') execute function refuse_one()`);
    try {
      const out = path.join(dir, 'partial');
      const env = { DATABASE_URL: withDatabase(inject('adminUrl'), t.name) };
      const r = await runCli(['token', 'nodes', '--registered', '--out', out], env);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        `${NODE_TOKENS_PER_TRANSACTION} of ${all.length} issued, then: database error P0001: refused for the test: ${last}`,
      );
      const written = (await readdir(out)).sort();
      expect(written).toEqual(all.slice(0, NODE_TOKENS_PER_TRANSACTION));
      for (const id of [written[0]!, written.at(-1)!]) {
        const p = await verifyApiToken(t.db, (await readFile(path.join(out, id), 'utf8')).trim());
        if (isAuthFailure(p)) throw new Error(`${id}: ${p.message}`);
        expect(p.node).toBe(id);
      }
    } finally {
      await t.pool.query(`drop trigger refuse_one on api_tokens; drop function refuse_one()`);
    }
  });

  it('rewrites a longer or wider file it finds in place: the token alone, mode 0600', async () => {
    const out = path.join(dir, 'rewrite');
    const env = { DATABASE_URL: withDatabase(inject('adminUrl'), t.name) };
    const id = (await t.pool.query<{ id: string }>(`select id from node_inventory order by id limit 1`)).rows[0]!.id;
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, id), `${'x'.repeat(500)}\n`, { mode: 0o644 });
    const r = await runCli(['token', 'nodes', '--registered', '--out', out], env);
    expect(r.code).toBe(0);
    const file = path.join(out, id);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const token = await readFile(file, 'utf8');
    expect(token).toMatch(/^bto_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    const p = await verifyApiToken(t.db, token.trim());
    if (isAuthFailure(p)) throw new Error(p.message);
    expect(p.node).toBe(id);
  });

  it('refuses --registered with --from-hsm, and a run without an output', async () => {
    const env = { DATABASE_URL: withDatabase(inject('adminUrl'), t.name) };
    const both = await runCli(['token', 'nodes', '--registered', '--from-hsm', 'http://127.0.0.1:1', '--out', dir], env);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--from-hsm <url> or --registered, not both');
    const none = await runCli(['token', 'nodes', '--registered'], env);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('give --out <dir> and/or --json-file <file>');
  });
});
