/**
 * The image the Containerfile builds (BOOTORCH_IMAGE, from scripts/image.sh), started with Debian's
 * podman on the host's network against the test PostgreSQL, as a site starts it: read-only root, /tmp
 * a tmpfs. `migrate` brings an empty database to the schema; `api` answers /healthz, GraphQL and the
 * built web console, and the image's HEALTHCHECK passes; `worker` answers on its health port; the
 * process is not root and cannot write outside /tmp; neither the sources nor the dev dependencies are
 * in the image. Only with BOOTORCH_IMAGE_TESTS=1 (.ci/run builds the image and sets both).
 *
 * podman's flags for this machine (no systemd, cgroups in hybrid mode, no CAP_SYS_RESOURCE): the
 * cgroupfs manager, runc (crun refuses hybrid cgroups), file events, and ulimits within the current
 * ones. A site's engine needs none of them.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { createApiToken } from '../../src/auth/index.ts';
import { connect } from '../../src/db/client.ts';
import { withDatabase } from '../helpers/global-setup.ts';
import { waitFor } from '../helpers/wait.ts';
import { freePort } from '../helpers/ports.ts';

const on = process.env.BOOTORCH_IMAGE_TESTS === '1';
const IMAGE = process.env.BOOTORCH_IMAGE ?? 'localhost/bootorch:ci';
const PODMAN = ['--cgroup-manager=cgroupfs', '--events-backend=file', '--runtime', 'runc'];

let admin: pg.Client;
let dbName: string;
let dbUrl: string;
const started: string[] = [];

function run(cmd: string, args: string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

const limit = async (flag: string) => (await run('sh', ['-c', `ulimit -H${flag}`])).stdout.trim();

/** `podman run` on the host network, read-only, /tmp a tmpfs; `detach` returns the container id. */
async function podmanRun(env: Record<string, string>, args: string[], o: { detach?: boolean; entrypoint?: string } = {}) {
  const ulimits = ['--ulimit', `nofile=${await limit('n')}`, '--ulimit', `nproc=${Math.min(Number(await limit('u')) || 4096, 4096)}`];
  const r = await run('podman', [
    ...PODMAN,
    'run',
    ...(o.detach ? ['-d'] : ['--rm']),
    ...['--network', 'host', '--read-only', '--tmpfs', '/tmp', '--health-interval', 'disable', ...ulimits],
    ...(o.entrypoint ? ['--entrypoint', o.entrypoint] : []),
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    IMAGE,
    ...args,
  ]);
  if (o.detach && r.code === 0) started.push(r.stdout.trim());
  return r;
}

const podman = (args: string[]) => run('podman', [...PODMAN, ...args]);

const answers = (url: string) =>
  fetch(url).then(
    (r) => (r.status === 200 ? r : undefined),
    () => undefined,
  );

beforeAll(async () => {
  if (!on) return;
  // An empty database (not the migrated template): the image's migrate makes the schema.
  admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  dbName = `bootorch_t_${randomBytes(6).toString('hex')}`;
  await admin.query(`create database ${dbName}`);
  dbUrl = withDatabase(inject('adminUrl'), dbName);
});

afterAll(async () => {
  for (const id of started) await podman(['rm', '-f', '-t', '5', id]);
  if (dbName) await admin.query(`drop database if exists ${dbName} with (force)`);
  await admin?.end();
});

describe.skipIf(!on)('the image', { timeout: 180_000 }, () => {
  it('holds the compiled roles and production dependencies only, as an unprivileged user', async () => {
    const r = await podmanRun(
      {},
      [
        '-c',
        'id -u; ls /app; for d in vitest tsx vite typescript; do test -e /app/node_modules/$d && echo has-dev-$d; done; ls /app/dist/main.js',
      ],
      {
        entrypoint: 'sh',
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const [uid, ...rest] = r.stdout.trim().split('\n');
    expect(uid).toBe('10001');
    expect(rest).not.toContain('src');
    // Development-only packages (the test runner, the TypeScript loader, the web build) stay out.
    expect(rest.filter((l) => l.startsWith('has-dev'))).toEqual([]);
    expect(rest).toContain('/app/dist/main.js');
    const inspect = async (field: string) =>
      JSON.parse((await podman(['image', 'inspect', '--format', `{{json .${field}}}`, IMAGE])).stdout);
    expect(await inspect('Config.Entrypoint')).toEqual(['node', '/app/dist/main.js']);
    expect((await inspect('HealthCheck')).Test).toEqual(['CMD', 'node', '/app/bin/healthcheck.mjs']);
  });

  it('migrates an empty database, then serves the api: /healthz, GraphQL, the console, its health check', async () => {
    const m = await podmanRun({ DATABASE_URL: dbUrl }, ['migrate']);
    expect(m.code, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/migrations applied/);

    const port = await freePort();
    const api = await podmanRun({ DATABASE_URL: dbUrl, PORT: String(port), BOOTORCH_AUTH_MODE: 'tokens' }, ['api'], { detach: true });
    expect(api.code, api.stderr).toBe(0);
    const id = api.stdout.trim();
    const health = await waitFor(
      () => answers(`http://127.0.0.1:${port}/healthz`),
      'the api container answers /healthz',
      60_000,
      () => id,
    );
    expect(await health.json()).toEqual({ apiStatus: 'ok', dbStatus: 'ok', queueStatus: 'ok' });
    expect((await podman(['healthcheck', 'run', id])).code).toBe(0);

    const conn = connect(dbUrl);
    const { token } = await createApiToken(conn.db, { role: 'viewer', subject: 'image-test' });
    await conn.close();
    const g = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ version { version } health { database } }' }),
    });
    expect(await g.json()).toMatchObject({ data: { health: { database: 'OK' } } });
    const page = await (await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' } })).text();
    expect(page).toMatch(/<script type="module"/);
    expect(page).not.toMatch(/not built/);

    const write = await podman(['exec', id, 'sh', '-c', 'touch /app/x 2>&1; touch /tmp/y && echo tmp-ok']);
    expect(write.stdout).toMatch(/Read-only file system/);
    expect(write.stdout).toMatch(/tmp-ok/);
  });

  it('runs the worker, answering on its health port', async () => {
    const port = await freePort();
    const w = await podmanRun({ DATABASE_URL: dbUrl, WORKER_HEALTH_PORT: String(port), BOOTORCH_ADAPTERS: 'sim' }, ['worker'], {
      detach: true,
    });
    expect(w.code, w.stderr).toBe(0);
    await waitFor(() => answers(`http://127.0.0.1:${port}/healthz`), 'the worker container answers /healthz', 60_000);
    expect((await podman(['healthcheck', 'run', w.stdout.trim()])).code).toBe(0);
  });
});
