/**
 * Node credentials in bulk (createNodeTokens, `bootorch token nodes --registered`): every node's earlier
 * tokens revoked, each new token valid only for its own node, across several transactions' worth of nodes.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
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
    await upsertNodes(
      t.db,
      ids.map((id, i) => ({
        id,
        hostname: `n${i}`,
        mac: `02:00:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`,
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
      })),
    );
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
