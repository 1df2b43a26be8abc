/**
 * bootorch behind PgBouncer in transaction mode (Debian's, 1.18: it does not carry named prepared
 * statements from one server session to the next). `bootorch api` and `bootorch worker` processes
 * reach PostgreSQL through it (DATABASE_URL), with DATABASE_SESSION_URL for what needs a session of
 * its own (LISTEN, session advisory locks) and BOOTORCH_NAMED_STATEMENTS=false for the report path.
 * A reboot of 100 nodes of `bootorch sim` over HTTP, the nodes reporting with their credentials,
 * completes with one graceful off and one on per node, every report acknowledged in the database, and
 * PgBouncer's own counters show the traffic went through it. Only with BOOTORCH_PGBOUNCER_TESTS=1
 * (.ci/run installs pgbouncer).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { FAST_OPTIONS } from '../helpers/cluster.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';
import { runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { waitFor as waitUntil } from '../helpers/wait.ts';
import { freePort } from '../helpers/ports.ts';

const on = process.env.BOOTORCH_PGBOUNCER_TESTS === '1';
const NODES = 100;
const OPTIONS = {
  ...FAST_OPTIONS,
  max_power_off_wait_time: 20,
  max_power_on_wait_time: 20,
  max_boot_wait_time: 120,
  default_retry_policy: 3,
};

let db: TestDb;
let bouncer: PgBouncer;
let sim: RoleProcess;
let api: RoleProcess;
let worker: RoleProcess;
let apiUrl: string;
let simUrl: string;
let adminToken: string;
let tokensDir: string;
let hsmUrl: string;

const logs = () =>
  [
    ['pgbouncer', bouncer],
    ['sim', sim],
    ['api', api],
    ['worker', worker],
  ]
    .map(([n, p]) => `--- ${n} (last 2000 chars):\n${(p as { output(): string } | undefined)?.output().slice(-2000) ?? ''}`)
    .join('\n');
const waitFor = <T>(cond: () => Promise<T | undefined | false>, what: string, timeoutMs: number) => waitUntil(cond, what, timeoutMs, logs);

async function gql(query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: Record<string, { [k: string]: unknown }>; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data!;
}

/** PgBouncer's transactions and queries for one database so far (its admin console, SHOW STATS). */
async function bouncerStats(database: string): Promise<{ xacts: number; queries: number }> {
  const c = new pg.Client({ connectionString: bouncer.adminUrl });
  await c.connect();
  try {
    const row = (await c.query('show stats')).rows.find((r) => r.database === database);
    return { xacts: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  if (!on) return;
  db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(OPTIONS)]);
  adminToken = (await createApiToken(db.db, { role: 'admin', subject: 'pgbouncer-test' })).token;
  // Few server connections for many clients: consecutive statements of one client land on different
  // server sessions, as they do on a busy site.
  bouncer = await startPgBouncer(db.url, { mode: 'transaction', poolSize: 4 });
  tokensDir = mkdtempSync(path.join(tmpdir(), 'bootorch-pgbouncer-tokens-'));
  const apiPort = await freePort();
  sim = startRole('sim', {}, [
    ...['--nodes', String(NODES), '--port', '0', '--timing', 'fast'],
    ...['--bootorch-url', `http://127.0.0.1:${apiPort}/graphql`, '--report-tokens-dir', tokensDir],
  ]);
  simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/))[1]!;
  const simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  hsmUrl = simEnv.HSM_URL!;
  const env = {
    DATABASE_URL: bouncer.url(db.name),
    DATABASE_SESSION_URL: db.url,
    BOOTORCH_NAMED_STATEMENTS: 'false',
    BOOTORCH_ADAPTERS: 'http',
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: String(apiPort),
    ...Object.fromEntries(['HSM_URL', 'PCS_URL', 'BSS_URL', 'CFS_URL', 'S3_URL'].map((k) => [k, simEnv[k]!])),
  };
  api = startRole('api', env);
  apiUrl = (await api.waitFor(/bootorch api: (\S+)/))[1]!;
  worker = startRole('worker', env);
}, 120_000);

afterAll(async () => {
  await Promise.all([sim?.stop(), api?.stop(), worker?.stop()]);
  await bouncer?.stop();
  await db?.drop();
  if (tokensDir) rmSync(tokensDir, { recursive: true, force: true });
});

describe.skipIf(!on)('behind PgBouncer in transaction mode', () => {
  test(`a reboot of ${NODES} nodes through PgBouncer completes, every report kept`, async () => {
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      60_000,
    );
    const minted = await runCli(['token', 'nodes', '--from-hsm', hsmUrl, '--out', tokensDir], { DATABASE_URL: db.url });
    expect(minted.code, minted.stderr).toBe(0);
    const image = (await (await fetch(`${simUrl}/sim/info`)).json()) as { defaultImage: { manifest: string } };
    await gql(
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: image.defaultImage.manifest, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    const before = await bouncerStats(db.name);
    const started = new Date();
    await gql(
      `mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "reboot-pooled" }) { session { name } } }`,
    );
    const s = await waitFor(
      async () => {
        const row = (await db.pool.query('select * from sessions where name = $1', ['reboot-pooled'])).rows[0];
        return row?.status === 'complete' ? row : undefined;
      },
      'session reboot-pooled complete',
      150_000,
    );
    expect(s.error).toBeNull();

    const rows = (await db.pool.query('select * from components order by id')).rows;
    for (const r of rows) expect(r, r.id).toMatchObject({ status: 'stable', error: '' });
    // Every node's report reached the database, through the fast path's unnamed statements.
    const reports = await db.pool.query(`select distinct component_id from component_events where kind = 'report' and at >= $1`, [started]);
    expect(reports.rows.length).toBe(NODES);
    const counters = (await (await fetch(`${simUrl}/sim/counters`)).json()) as {
      transitions: Record<string, Record<string, number> | undefined>;
      reports: { delivered: number; refused: number };
    };
    // ...each at its first try: none refused (a named statement missing on the server session the
    // pooler picked is refused, and the node tries again).
    expect(counters.reports).toMatchObject({ refused: 0 });
    expect(counters.reports.delivered).toBeGreaterThanOrEqual(NODES);
    for (const r of rows) {
      expect(counters.transitions['Soft-Off']?.[r.id] ?? 0, `Soft-Off ${r.id}`).toBe(1);
      expect(counters.transitions.On?.[r.id] ?? 0, `On ${r.id}`).toBe(1);
    }
    // The session's work went through PgBouncer: thousands of its transactions on this database.
    const after = await bouncerStats(db.name);
    expect(after.xacts - before.xacts).toBeGreaterThan(NODES);
    expect(api.output() + worker.output()).not.toMatch(/prepared statement/);
  }, 240_000);
});
