/**
 * PostgreSQL stopped for 20 s in the middle of a session, then started again. A dedicated embedded
 * PostgreSQL (own data folder and port) is used, never the machine's shared one.
 *
 * Processes: `bootorch sim` (interactive timing: seconds per power change and boot, so the session is
 * still running when the database goes), `bootorch api` and `bootorch worker` (HTTP adapters).
 * While the database is down the API must answer every request with a clear UNAVAILABLE (HTTP
 * 503) and /healthz must say `dbStatus: not_available`; neither process may exit. Once it is back, the
 * same processes (no restart) carry on by themselves and the session completes with every node stable.
 *
 * The outage itself is wall-clock time by definition: the test keeps probing the API until the 20 s
 * have passed. Runs only with BOOTORCH_FAULT_TESTS=1.
 */
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.ts';
import { connect, runMigrations, type Connection } from '../../src/db/client.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { ROOT } from '../helpers/processes.ts';
import { FAULT_OPTIONS, gql, startStack, waitFor, type Stack } from './stack.ts';

const NODES = Number(process.env.FAULT_NODES_OUTAGE ?? 200);
const OUTAGE_MS = 20_000;
const PG_DIR = path.join(ROOT, '.data/fault-pg');
const PG_PORT = Number(process.env.FAULT_PG_PORT ?? 54361);
const DB = 'bootorch_fault_outage';

let server: EmbeddedServer;
let conn: Connection;
let stack: Stack;
let admin: string;

const alive = (p: { proc: { exitCode: number | null; signalCode: string | null } }) =>
  p.proc.exitCode === null && p.proc.signalCode === null;

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('PostgreSQL stopped for 20 s mid-session', () => {
  beforeAll(async () => {
    server = await startEmbeddedPostgres(PG_DIR, PG_PORT, undefined, { durability: 'throwaway' });
    const c = new pg.Client({ connectionString: server.url('postgres') });
    await c.connect();
    await c.query(`drop database if exists ${DB} with (force)`);
    await c.query(`create database ${DB}`);
    await c.end();
    conn = connect(server.url(DB), { max: 4 });
    await runMigrations(conn.db);
    await conn.pool.query('insert into options (id, data) values (1, $1)', [
      JSON.stringify({ ...FAULT_OPTIONS, max_power_on_wait_time: 120, max_boot_wait_time: 300 }),
    ]);
    admin = (await createApiToken(conn.db, { role: 'admin', subject: 'fault-tests' })).token;
    stack = await startStack({ databaseUrl: server.url(DB), nodes: NODES, timing: 'interactive' });
    await waitFor(
      async () => Number((await conn.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      120_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await conn?.close();
    await server?.stop();
  });

  test('the API says unavailable, health says so, the processes reconnect by themselves, the session completes', async () => {
    const api = stack.apiUrls[0]!;
    const healthz = api.replace(/\/graphql$/, '/healthz');
    const [apiPid, workerPid] = [stack.apis[0]!.proc.pid, stack.worker.proc.pid];
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    await gql(
      api,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "outage" }) { session { name } } }',
    );
    // Mid-session: hardware in flight (powering off or on), nothing finished yet.
    await waitFor(
      async () =>
        Number(
          (await conn.pool.query(`select count(*) from components where session = 'outage' and phase in ('powering_off', 'powering_on')`))
            .rows[0].count,
        ) > 0,
      'nodes in flight',
      60_000,
      stack.logs,
    );
    const stable = Number(
      (await conn.pool.query(`select count(*) from components where session = 'outage' and status = 'stable' and not enabled`)).rows[0]
        .count,
    );

    await server.stop();
    const down = Date.now();
    let probes = 0;
    const seen = new Set<string>();
    while (Date.now() - down < OUTAGE_MS) {
      const r = await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query: '{ sessions { name status { status } } }' }),
      });
      const body = (await r.json()) as { errors?: { message: string; extensions?: { code?: string } }[] };
      expect(r.status).toBe(503);
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE');
      seen.add(body.errors![0]!.message);
      const h = (await (await fetch(healthz)).json()) as { dbStatus: string; apiStatus: string };
      expect(h).toMatchObject({ apiStatus: 'ok', dbStatus: 'not_available' });
      expect(alive(stack.apis[0]!) && alive(stack.worker), `a process exited during the outage:\n${stack.logs()}`).toBe(true);
      probes++;
      await new Promise((r) => setTimeout(r, 250)); // probe pacing; the loop ends at the outage deadline
    }
    const outageMs = Date.now() - down;

    server = await startEmbeddedPostgres(PG_DIR, PG_PORT, undefined, { durability: 'throwaway' });
    const back = Date.now();
    await waitFor(
      async () => {
        const r = await fetch(api, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
          body: JSON.stringify({ query: '{ sessions { name } }' }),
        });
        return r.status === 200;
      },
      'the API answers again',
      60_000,
      stack.logs,
    );
    const apiBackMs = Date.now() - back;
    // /healthz answers from a one-second cache (src/api/server.ts): it says ok within a moment, not at once.
    await waitFor(
      async () => ((await (await fetch(healthz)).json()) as { dbStatus: string }).dbStatus === 'ok',
      '/healthz says the database is back',
      5_000,
      stack.logs,
    );

    const s = await waitFor(
      async () => {
        const r = (await conn.pool.query(`select * from sessions where name = 'outage'`)).rows[0];
        return r?.status === 'complete' ? r : undefined;
      },
      'session complete after the outage',
      300_000,
      stack.logs,
    );
    const sessionBackMs = Date.now() - back;
    expect(s.error).toBeNull();
    const rows = (await conn.pool.query(`select id, status, phase, enabled, error from components order by id`)).rows;
    expect(rows).toHaveLength(NODES);
    for (const r of rows) expect(r, r.id).toMatchObject({ status: 'stable', phase: '', enabled: false, error: '' });
    // The same processes carried on: nothing was restarted.
    expect([stack.apis[0]!.proc.pid, stack.worker.proc.pid]).toEqual([apiPid, workerPid]);
    expect(alive(stack.apis[0]!) && alive(stack.worker)).toBe(true);

    process.stdout.write(
      `\nPostgreSQL down ${(outageMs / 1000).toFixed(1)} s mid-session (${NODES} nodes, ${stable} done before): ` +
        `${probes} API probes all answered 503 UNAVAILABLE (${[...seen].join(' | ')}), /healthz not_available; ` +
        `API answering ${(apiBackMs / 1000).toFixed(1)} s after the restart, session complete ${(sessionBackMs / 1000).toFixed(1)} s after; ` +
        `same api and worker processes; nodes lost 0\n`,
    );
  }, 600_000);
});
