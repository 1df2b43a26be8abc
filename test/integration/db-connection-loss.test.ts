/**
 * A server that ends a connection while no query runs on it (a failover's old primary shutting down,
 * or pg_terminate_backend: both send FATAL 57P01) makes pg emit 'error' on the client; with no
 * listener, that ends the process. Seen in the failover fault test: the API died in the middle of a
 * 2,000-node reboot, and 1,225 nodes never had their reports heard. Each case runs in a process of its
 * own (an unhandled 'error' kills the process, which is what is tested): a client checked out of the
 * pool, as between a transaction's statements, and a connection of its own (LISTEN, locks).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';

const REPO = path.resolve(import.meta.dirname, '../..');
const CLIENT_TS = path.join(REPO, 'src/db/client.ts');
const LIVE_TS = path.join(REPO, 'src/db/live.ts');
let db: TestDb;

beforeAll(async () => {
  db = await freshDb();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs `body` (module code with `connect`, `sessionClient`, `listenConnection`, `url` and `kill(client)` in scope) in a node process of its own. */
function runAlone(body: string): { status: number | null; out: string } {
  // Inside the repository (node_modules' scratch folder), so 'pg' and the ES module settings resolve.
  const scratch = path.join(REPO, 'node_modules/.cache');
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(path.join(scratch, 'bootorch-connloss-'));
  const file = path.join(dir, 'case.mts');
  writeFileSync(
    file,
    `import pg from 'pg';
import { connect, sessionClient } from ${JSON.stringify(CLIENT_TS)};
import { listenConnection } from ${JSON.stringify(LIVE_TS)};
const url = ${JSON.stringify(db.url)};
const admin = new pg.Client({ connectionString: url });
await admin.connect();
/** Ends the client's server session and waits for the client to see it ('error' first, then 'end'). */
const kill = async (client: pg.ClientBase) => {
  const pid = (await client.query('select pg_backend_pid() as pid')).rows[0].pid;
  const ended = new Promise((r) => client.once('end', r));
  await admin.query('select pg_terminate_backend($1)', [pid]);
  const late = setTimeout(() => { console.error('the client never saw its connection end'); process.exit(2); }, 10_000);
  await ended;
  clearTimeout(late);
};
${body}
await admin.end();
console.log('alive');
process.exit(0);
`,
  );
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  rmSync(dir, { recursive: true, force: true });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe('a connection ended by the server while idle does not end the process', () => {
  test('a client checked out of the pool (between statements of a transaction)', () => {
    const r = runAlone(`
const conn = connect(url, { max: 2 });
const client = await conn.pool.connect();
await client.query('begin');
await kill(client);
// The transaction's next statement fails, naming the cause; the pool drops the client and serves the next caller.
const next = await client.query('select 1').then(() => 'answered', (e) => 'failed: ' + e.message);
if (!next.startsWith('failed')) throw new Error('a dead client answered: ' + next);
client.release(true);
const after = await conn.pool.query('select 1 as one');
if (after.rows[0].one !== 1) throw new Error('the pool did not recover');
await conn.close();
`);
    expect(r.out).toContain('alive');
    expect(r.status).toBe(0);
  }, 90_000);

  test('a connection of its own: a LISTEN connection and a lock connection', () => {
    const r = runAlone(`
const listen = await listenConnection({ connectionString: url }, ['bootorch_test_channel']);
await kill(listen);
const lock = sessionClient({ connectionString: url });
await lock.connect();
await kill(lock);
await lock.end().catch(() => {});
`);
    expect(r.out).toContain('alive');
    expect(r.status).toBe(0);
  }, 90_000);
});
