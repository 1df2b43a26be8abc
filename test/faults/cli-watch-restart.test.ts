/**
 * `bootorch session create --watch` rides out an API restart: the API process (a real child) is
 * stopped while the watch runs and started again on the same port only after the session completed
 * (the worker carries on: its simulated nodes report to the database) and the watch had retried a few
 * times. The worker is stopped while the session is created and the watch starts, and started again
 * once the API is down: the simulated nodes act at once, so with the worker running the session could
 * complete before the API stopped (it did, in CI: no retry to see); the watch reconnects, shows the final status and exits with the session's result (0: no
 * node failed), never with the API's outage. Runs only with BOOTORCH_FAULT_TESTS=1.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { FAST_OPTIONS } from '../helpers/cluster.ts';
import { ROOT, startRole, type RoleProcess } from '../helpers/processes.ts';
import { DEV_ADMIN_TOKEN, devAuthEnv } from '../helpers/auth.ts';
import { waitFor } from '../helpers/wait.ts';
import { SimWorld } from '../../src/sim/world.ts';

const NODES = 16;
let db: TestDb;
let worker: RoleProcess;
let api: RoleProcess;
let env: Record<string, string>;
let url: string;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

const startApi = async () => {
  api = startRole('api', env);
  await api.waitFor(/bootorch api: (\S+)/, 120_000);
};

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('session create --watch across an API restart', { timeout: 240_000 }, () => {
  beforeAll(async () => {
    db = await freshDb();
    await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify({ ...FAST_OPTIONS, discovery_frequency: 1 })]);
    env = {
      DATABASE_URL: db.url,
      SIM_NODES: String(NODES),
      SIM_SEED: '1',
      BOOTORCH_ADAPTERS: 'sim',
      PORT: String(await freePort()),
      ...devAuthEnv(),
    };
    url = `http://127.0.0.1:${env.PORT}/graphql`;
    await startApi();
    worker = startRole('worker', env);
    await waitFor(
      async () => (await db.pool.query('select count(*)::int as n from components')).rows[0].n === NODES,
      'components discovered',
      60_000,
    );
  });

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await db?.drop();
  });

  test('the watch retries while the API is down, then reports the completed session and exits 0', async () => {
    await worker.stop();
    const image = new SimWorld({ nodes: NODES, seed: 1 });
    const manifest = image.defaultImage.manifest;
    image.close();
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEV_ADMIN_TOKEN}` },
      body: JSON.stringify({
        query: `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "t", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
        variables: { b: [{ name: 'compute', path: manifest, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
      }),
    });
    expect(r.status).toBe(200);

    const cli = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'session', 'create', '--template', 't', '--operation', 'reboot', '--name', 'w', '--watch'],
      {
        cwd: ROOT,
        env: { ...process.env, BOOTORCH_URL: url, BOOTORCH_TOKEN: DEV_ADMIN_TOKEN, BOOTORCH_DATA_DIR: '/nonexistent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    cli.stdout!.on('data', (d) => (out += d));
    cli.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => cli.on('close', (code) => resolve(code)));
    const retries = () => (out.match(/retrying|reconnecting/g) ?? []).length;

    // The watch is following the session: its first status line (pending: no worker to set it up).
    await waitFor(
      async () => /w: pending/.test(out) || cli.exitCode !== null,
      'the watch shows progress',
      60_000,
      () => `${out}\n--- api:\n${api.output()}`,
    );
    expect(cli.exitCode, out).toBeNull();
    await api.stop();
    worker = startRole('worker', env);
    // The API stays down until the session completed without it and the watch retried five times
    // (about 9 s of backoff): longer than a quick restart, as a slow start or a failover can be.
    await waitFor(
      async () =>
        cli.exitCode !== null ||
        (retries() >= 5 && (await db.pool.query(`select status from sessions where name = 'w'`)).rows[0]?.status === 'complete'),
      'the session completes while the API is down, and the watch retries',
      120_000,
      () => out,
    );
    await startApi();
    const code = await exited;
    expect(code, out).toBe(0);
    expect(out).toMatch(/retrying in/);
    expect(out).toMatch(new RegExp(`Session w complete in \\S+: ${NODES} nodes, ${NODES} succeeded, 0 failed`));
    expect(out).not.toMatch(/BAD_USER_INPUT/);
  });
});
