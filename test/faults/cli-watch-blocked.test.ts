/**
 * `bootorch session create --watch` during a PCS outage shows the session's nodes as blocked by PCS
 * (not failed): `blocked N by PCS` beside `failed 0` on its progress lines, a line naming PCS, since
 * when, its error and what bootorch does about it, and one when no node waits for PCS any more; then
 * the session completes once PCS is back and the watch exits 0. Processes: `bootorch sim` (PCS answers
 * 503 while its fault is on), `bootorch api`, `bootorch worker`, and the CLI as a child process (its
 * output not a terminal: one line per update).
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { ROOT } from '../helpers/processes.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { FAULT_OPTIONS, gql, startStack, waitFor, type Stack } from './stack.ts';

const NODES = 16;

let db: TestDb;
let stack: Stack;
let admin: string;

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('session create --watch during an outside outage', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    db = await freshDb();
    // Room for the outage: a PCS error is retried on each pass, never counted as a failed attempt here.
    await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify({ ...FAULT_OPTIONS, default_retry_policy: 10 })]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'fault-tests' })).token;
    stack = await startStack({ databaseUrl: db.url, nodes: NODES, timing: 'fast' });
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      120_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  test('PCS down: the watch says the nodes are blocked by PCS, not failed; PCS back: they go on and the watch exits 0', async () => {
    const api = stack.apiUrls[0]!;
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "t", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    await stack.simFaults({ services: { pcs: { down: true } } });

    const cli = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', 'session', 'create', '--template', 't', '--operation', 'reboot', '--name', 'w', '--watch'],
      {
        cwd: ROOT,
        env: { ...process.env, BOOTORCH_URL: api, BOOTORCH_TOKEN: admin, BOOTORCH_DATA_DIR: '/nonexistent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    cli.stdout!.on('data', (d) => (out += d));
    cli.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => cli.on('close', (code) => resolve(code)));

    // The nodes error on PCS and stay enabled and not failed; the watch says so.
    await waitFor(
      async () => cli.exitCode !== null || /\| blocked \d+ by PCS/.test(out),
      'the watch shows nodes blocked by PCS',
      120_000,
      () => `${out}\n${stack.logs()}`,
    );
    const during = (await db.pool.query(`select status, enabled, failure_reason, error from components where session = 'w'`)).rows;
    expect(during.length).toBeGreaterThan(0);
    for (const r of during) expect(r.status, JSON.stringify(r)).not.toBe('failed');
    const progressLine = out.split('\n').find((l) => /\| blocked \d+ by PCS/.test(l))!;
    expect(progressLine).toMatch(/\| failed 0 \| blocked \d+ by PCS since \d\d:\d\d:\d\d UTC \(not failed\)/);
    expect(out).toMatch(
      /◷ blocked, not failed: \d+ nodes? wait for PCS failing since \d\d:\d\d:\d\d UTC: x\S+.* — PCS .*(503|unavailable)/i,
    );
    expect(out).toMatch(/bootorch asks PCS again on each pass and goes on as soon as it answers; check PCS/);
    expect(out).not.toMatch(/✗ .* failed/);

    await stack.simFaults({ services: { pcs: { down: false } } });
    await waitFor(
      async () => cli.exitCode !== null,
      'the watch exits after PCS is back',
      180_000,
      () => `${out}\n${stack.logs()}`,
    );
    const code = await exited;
    expect(code, out).toBe(0);
    expect(out).toMatch(/▷ no node waits for PCS any more/);
    expect(out).toMatch(new RegExp(`Session w complete in \\S+: ${NODES} nodes, ${NODES} succeeded, 0 failed`));
    process.stdout.write(
      `\nthe watch through a PCS outage:\n${out
        .split('\n')
        .filter((l) => /blocked|◷|▷|complete in/.test(l))
        .slice(0, 8)
        .join('\n')}\n`,
    );
  });
});
