/**
 * The `bootorch` client commands as a user runs them (a child process per command) against a real
 * API server on a whole in-process bootorch (engine + simulated cluster): output, --json, exit codes,
 * `session create --watch` to the end with and without failures, and clear errors when the API is
 * unreachable or refuses the token.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { runCli } from '../helpers/processes.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { testAuth } from '../helpers/auth.ts';

let c: Cluster;
let api: ApiServer;
/** BOOTORCH_URL and an admin BOOTORCH_TOKEN. */
let env: Record<string, string>;

beforeAll(async () => {
  c = await startCluster({ world: { nodes: 6, initial: { booted: true } }, options: { default_retry_policy: 1 } });
  const auth = await testAuth(c.db.db);
  api = await startApiServer({
    db: c.db.db,
    scheduler: c.engine.scheduler,
    port: 0,
    host: '127.0.0.1',
    images: c.adapters.images,
    auth: auth.auth,
  });
  env = { BOOTORCH_URL: api.url, BOOTORCH_TOKEN: auth.adminToken };
});
afterAll(async () => {
  await api?.close();
  await c?.close();
});

// Each command is a fresh process (about 2 s of start-up on an idle machine, far more on a busy one).
describe('bootorch CLI', { timeout: 300_000 }, () => {
  test('template apply (the README example), list, get, validate, delete', async () => {
    const applied = await runCli(['template', 'apply', '-f', 'examples/compute-template.yaml'], env);
    expect(applied).toMatchObject({ code: 0, stdout: 'template compute-demo applied\n' });
    const [list, get, valid] = await Promise.all([
      runCli(['template', 'list'], env),
      runCli(['template', 'get', 'compute-demo', '--json'], env),
      runCli(['template', 'validate', 'compute-demo'], env),
    ]);
    expect(list.stdout).toMatch(
      /^NAME\s+TENANT\s+BOOT SETS\s+CONFIGURATION\s+DESCRIPTION\ncompute-demo\s+compute\s+compute-cfg\s+x86 compute/,
    );
    expect(JSON.parse(get.stdout)).toMatchObject({
      name: 'compute-demo',
      bootSets: [{ name: 'compute', nodeRolesGroups: ['Compute'], arch: 'X86' }],
      rollout: null,
    });
    expect(valid).toMatchObject({ code: 0, stdout: 'template compute-demo is valid\n' });
    const gone = await runCli(['template', 'delete', 'compute-demo'], env);
    expect(gone.code).toBe(0);
    const missing = await runCli(['template', 'get', 'compute-demo'], env);
    expect(missing).toMatchObject({ code: 1, stderr: 'bootorch: no template "compute-demo"\n' });
  });

  test('session create --watch follows a reboot to the end; session list/get/status', async () => {
    await c.template('t');
    const r = await runCli(['session', 'create', '--template', 't', '--operation', 'reboot', '--name', 'w1', '--watch'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('session w1 created; watching (Ctrl-C stops watching, not the session)');
    expect(
      lines.some((l) =>
        /^w1: \d+(\.\d+)?% complete \(\d+\/6\) \| powering off \d+ · powering on \d+ · configuring \d+ \| failed 0/.test(l),
      ),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(/^Session w1 complete in \d+:\d\d:\d\d: 6 nodes, 6 succeeded, 0 failed$/);

    const [list, get, status] = await Promise.all([
      runCli(['session', 'list', '--status', 'complete'], env),
      runCli(['session', 'get', 'w1', '--json'], env),
      runCli(['session', 'status', 'w1'], env),
    ]);
    expect(list.stdout).toMatch(/\nw1\s+reboot\s+t\s+complete\s+\S+\s+6/);
    expect(JSON.parse(get.stdout)).toMatchObject({ name: 'w1', operation: 'REBOOT', status: { status: 'COMPLETE', error: null } });
    expect(status).toMatchObject({ code: 0 });
    expect(status.stdout).toMatch(/^Session w1 complete in .*: 6 nodes, 6 succeeded, 0 failed\n$/);
  });

  test('a session that ends with failures: failed nodes as they happen, summary, exit 1; --json is ndjson', async () => {
    const [dead] = c.world.ids();
    c.world.faults.setNodes('neverPowersOn', [dead!]);
    try {
      await c.template('t2');
      const human = await runCli(['session', 'create', '--template', 't2', '--operation', 'reboot', '--name', 'f1', '--watch'], env);
      expect(human.code).toBe(1);
      expect(human.stdout).toContain(`✗ ${dead} failed: power_on_timeout`);
      expect(human.stdout).toMatch(
        /Session f1 complete in .*: 6 nodes, 5 succeeded, 1 failed\n  failed, by reason:\n    power_on_timeout \(1\): x/,
      );

      const js = await runCli(['session', 'create', '--template', 't2', '--operation', 'reboot', '--name', 'f2', '--watch', '--json'], env);
      expect(js.code).toBe(1);
      const objs = js.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const events = objs.filter((o) => o.type === 'event');
      const cursors = events.map((e) => Number(e.cursor));
      expect(cursors).toEqual([...new Set(cursors)].sort((a, b) => a - b));
      // Every event of the session, from setup to the end, exactly as the log has it.
      const log = await c.events({ session: 'f2' });
      expect(cursors).toEqual(log.map((e) => Number(e.id)));
      expect(events.some((e) => e.kind === 'failed' && e.componentId === dead && e.reason === 'power_on_timeout')).toBe(true);
      expect(objs.some((o) => o.type === 'progress' && o.status === 'RUNNING')).toBe(true);
      expect(objs.at(-1)).toMatchObject({ type: 'summary', session: 'f2', total: 6, succeeded: 5, failed: 1 });

      const status = await runCli(['session', 'status', 'f2'], env);
      expect(status.code).toBe(1);
      const del = await runCli(['session', 'delete', 'f2'], env);
      expect(del).toMatchObject({ code: 0, stdout: 'session f2 deleted\n' });
    } finally {
      c.world.faults.setNodes('neverPowersOn', []);
    }
  });

  test('components, apply-staged and options', async () => {
    const ids = c.world.ids();
    const list = await runCli(['component', 'list', '--limit', '3'], env);
    expect(list.stdout.trim().split('\n')).toHaveLength(4);
    expect(list.stdout).toMatch(/^ID\s+ENABLED\s+PHASE\s+STATUS\s+SESSION\s+ERROR\n/);
    const off = await runCli(['component', 'disable', ids[1]!, ids[2]!], env);
    expect(off).toMatchObject({ code: 0, stdout: '2 components disabled\n' });
    const get = await runCli(['component', 'get', ids[1]!, '--json'], env);
    expect(JSON.parse(get.stdout)).toMatchObject({ id: ids[1], enabled: false });
    const staged = await runCli(['apply-staged', `${ids[3]},x9999c0s0b0n0`], env);
    expect(staged.stdout).toMatch(/^applied 0, failed 0, ignored 2\n/);

    const set = await runCli(['options', 'set', 'default_retry_policy=4', 'cleanupCompletedSessionTtl=0', 'clear_stage=true'], env);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe('defaultRetryPolicy: 4\ncleanupCompletedSessionTtl: "0"\nclearStage: true\n');
    const get2 = await runCli(['options', 'get', 'default_retry_policy', '--json'], env);
    expect(JSON.parse(get2.stdout)).toEqual({ defaultRetryPolicy: 4 });
    const bad = await runCli(['options', 'set', 'default_retry_policy=lots'], env);
    expect(bad).toMatchObject({ code: 2, stderr: 'bootorch: defaultRetryPolicy needs a whole number, got "lots"\n' });
    const range = await runCli(['options', 'set', 'bss_read_timeout=5'], env);
    expect(range.code).toBe(1);
    expect(range.stderr).toMatch(/^bootorch: patch\.bssReadTimeout: .*\[BAD_USER_INPUT\]/);
  });

  test('clear errors: API unreachable (exit 3), token refused (exit 3), unknown session', async () => {
    const [down, noToken, badToken, good, unknown] = await Promise.all([
      runCli(['session', 'list'], { BOOTORCH_URL: 'http://127.0.0.1:2/graphql' }),
      runCli(['session', 'list'], { BOOTORCH_URL: api.url }),
      runCli(['session', 'list', '--token', 'bto_0000000000000bad_nottherighttokennottherighttokennottherighttok'], {
        BOOTORCH_URL: api.url,
      }),
      runCli(['session', 'list', '--json'], env),
      runCli(['session', 'watch', 'nope'], env),
    ]);
    expect(down).toMatchObject({ code: 3, stdout: '' });
    expect(down.stderr).toBe(
      'bootorch: cannot reach the bootorch API at http://127.0.0.1:2/graphql (connection refused). Is it running? Set --url or BOOTORCH_URL.\n',
    );
    expect(noToken).toMatchObject({ code: 3, stdout: '' });
    expect(noToken.stderr).toMatch(/^bootorch: the API wants a token: give --token or set BOOTORCH_TOKEN \(401 Unauthorized\)\n$/);
    expect(badToken).toMatchObject({ code: 3, stdout: '' });
    expect(badToken.stderr).toMatch(/^bootorch: the token was refused: check --token or BOOTORCH_TOKEN \(401 Unauthorized\)\n$/);
    expect(good.code).toBe(0);
    expect(Array.isArray(JSON.parse(good.stdout))).toBe(true);
    expect(unknown).toMatchObject({ code: 1, stderr: 'bootorch: no session "nope"\n' });
  });

  test('on a local API without a token, the token `bootorch dev` keeps in its data folder is used', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootorch-cli-'));
    try {
      fs.writeFileSync(path.join(dir, 'dev-admin-token'), `${env.BOOTORCH_TOKEN}\n`);
      const ok = await runCli(['session', 'list', '--json'], { BOOTORCH_URL: api.url, BOOTORCH_DATA_DIR: dir });
      expect(ok.code).toBe(0);
      fs.writeFileSync(path.join(dir, 'dev-admin-token'), 'bto_0000000000000bad_nottherighttokennottherighttokennottherighttok');
      const stale = await runCli(['session', 'list'], { BOOTORCH_URL: api.url, BOOTORCH_DATA_DIR: dir });
      expect(stale.code).toBe(3);
      expect(stale.stderr).toContain(`the token in ${path.join(dir, 'dev-admin-token')} was refused`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
