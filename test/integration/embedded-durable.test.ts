/**
 * The embedded PostgreSQL that `npm start` and every role use without DATABASE_URL keeps committed
 * data through a crash: the server a started role runs reports fsync, synchronous_commit and
 * full_page_writes on. Only the tests' own throwaway servers run with them off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { startRole, type RoleProcess } from '../helpers/processes.ts';
import { embeddedUrl } from '../../src/db/embedded.ts';
import { freePort } from '../helpers/global-setup.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootorch-durable-'));
let api: RoleProcess | undefined;

afterAll(async () => {
  await api?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function settings(port: number): Promise<Record<string, string>> {
  const c = new pg.Client({ connectionString: embeddedUrl(port, 'bootorch') });
  await c.connect();
  try {
    const r = await c.query(`select name, setting from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes')`);
    return Object.fromEntries(r.rows.map((x: { name: string; setting: string }) => [x.name, x.setting]));
  } finally {
    await c.end();
  }
}

describe('the default database survives a crash', () => {
  test('a role started without DATABASE_URL runs its embedded PostgreSQL with fsync, synchronous commit and full page writes on', async () => {
    const port = await freePort();
    api = startRole('api', {
      DATABASE_URL: undefined,
      BOOTORCH_DATA_DIR: dir,
      EMBEDDED_PG_PORT: String(port),
      PORT: '0',
      BOOTORCH_AUTH_MODE: 'tokens',
    });
    await api.waitFor(/bootorch api: (\S+)/, 120_000);
    expect(await settings(port)).toEqual({ fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on' });
    expect(fs.existsSync(path.join(dir, 'pg.durable'))).toBe(true);
  }, 180_000);
});
