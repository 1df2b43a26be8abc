/**
 * The compiled CLI as it is shipped (bin/bootorch.mjs over dist/, what the image and `npm start` run):
 * `migrate` exits after migrating, and the api starts and serves /healthz, GraphQL (one copy of
 * graphql in the bundle's realm) and the files it reads next to its code at run time (the shell
 * reporter, src/api/boot/). Builds dist/ first when it is missing or older than src/ (a few seconds).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bin (no types); distState() says whether dist/ is current.
import { distState } from '../../bin/dist-state.mjs';
import { createApiToken } from '../../src/auth/index.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { withDatabase } from '../helpers/global-setup.ts';
import { COMPILED, ROOT, runCli, startRole, type RoleProcess } from '../helpers/processes.ts';
import { freePort } from '../helpers/ports.ts';

let db: TestDb;
let api: RoleProcess | undefined;

beforeAll(async () => {
  if (distState() !== 'fresh') {
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`build failed:\n${stdout}${stderr}`)) : resolve(),
      ),
    );
  }
  db = await freshDb();
}, 150_000);

afterAll(async () => {
  await api?.stop();
  await db?.drop();
});

describe('the compiled CLI', () => {
  it('bootorch migrate brings an empty database to the current schema and exits 0', async () => {
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    const name = `bootorch_t_${randomBytes(6).toString('hex')}`;
    await admin.query(`create database ${name}`);
    const target = new pg.Client({ connectionString: withDatabase(inject('adminUrl'), name) });
    try {
      const r = await runCli(['migrate'], { DATABASE_URL: withDatabase(inject('adminUrl'), name), LOG_LEVEL: 'info' }, 60_000, COMPILED);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/migrations applied/);
      await target.connect();
      const journal = JSON.parse(readFileSync(path.join(ROOT, 'drizzle/meta/_journal.json'), 'utf8')) as { entries: unknown[] };
      const applied = await target.query('select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(applied.rows[0].n).toBe(journal.entries.length);
      const queues = await target.query('select count(*)::int as n from pgboss.queue');
      expect(queues.rows[0].n).toBeGreaterThan(0);
    } finally {
      await target.end().catch(() => {});
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it('bootorch api answers /healthz, GraphQL and the boot files', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    api = startRole(
      'api',
      {
        DATABASE_URL: db.url,
        PORT: String(port),
        LOG_LEVEL: 'info',
        BOOTORCH_ADAPTERS: 'standalone',
        BOOTORCH_SECRET_KEY: randomBytes(32).toString('base64'),
        BOOTORCH_AUTH_MODE: 'tokens',
      },
      [],
      [],
      COMPILED,
    );
    await api.waitFor(/api listening/);

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ apiStatus: 'ok', dbStatus: 'ok' });

    const { token } = await createApiToken(db.db, { role: 'viewer', subject: 'compiled-test' });
    const r = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ version { version } health { database } }' }),
    });
    const body = (await r.json()) as { data?: { version: { version: string } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(body.data?.version.version).toBe(pkg.version);

    const reporter = await fetch(`${base}/boot/v1/reporter.sh`);
    expect(reporter.status).toBe(200);
    expect(await reporter.text()).toBe(readFileSync(path.join(ROOT, 'src/api/boot/reporter.sh'), 'utf8'));
  });
});
