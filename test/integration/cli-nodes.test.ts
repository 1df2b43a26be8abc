/** `bootorch node ...` as a user runs it (a child process per command) against a standalone API. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './api-harness.ts';
import { runCli } from '../helpers/processes.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { open } from '../../src/adapters/standalone/secrets.ts';

const key = randomBytes(32);
let h: Harness;
let env: Record<string, string>;
beforeAll(async () => {
  h = await startHarness({ nodeRegistry: new NodeRegistry(key) });
  env = { BOOTORCH_URL: h.server.url, BOOTORCH_TOKEN: h.auth.adminToken, BMC_PASSWORD: 'from-the-env' };
});
afterAll(async () => {
  await h?.close();
});

describe('bootorch node', { timeout: 120_000 }, () => {
  test('apply (the README example), register, list, delete', async () => {
    expect(await runCli(['node', 'apply', '-f', 'examples/nodes.yaml'], env)).toMatchObject({ code: 0, stdout: '2 nodes registered\n' });
    const { rows } = await h.db.pool.query(`select id, bmc_driver, bmc_secret from node_inventory order by id`);
    expect(rows.map((r) => r.bmc_driver)).toEqual(['ipmi', 'redfish']);
    expect(open(key, rows[0].id, rows[0].bmc_secret)).toBe('from-the-env');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootorch-cli-'));
    fs.writeFileSync(path.join(dir, 'pw'), 'from-a-file\n');
    const reg = await runCli(
      [
        'node',
        'register',
        'x3000c0s3b0n0',
        '--mac',
        '52:54:00:00:00:03',
        '--group',
        'compute',
        'gpu',
        '--bmc-driver',
        'ipmi',
        '--bmc-address',
        '10.1.0.13',
        '--bmc-user',
        'admin',
        '--bmc-password-file',
        path.join(dir, 'pw'),
      ],
      env,
    );
    expect(reg).toMatchObject({ code: 0, stdout: 'node x3000c0s3b0n0 registered\n' });
    const sealed = (await h.db.pool.query(`select bmc_secret from node_inventory where id = 'x3000c0s3b0n0'`)).rows[0].bmc_secret;
    expect(open(key, 'x3000c0s3b0n0', sealed)).toBe('from-a-file');

    const list = await runCli(['node', 'list'], env);
    expect(list.stdout).toMatch(/^XNAME\s+MAC\s+ARCH\s+GROUPS\s+ENABLED\s+BMC\s+MEM GiB\s+BIOS\s+KERNEL\n/);
    expect(list.stdout).toMatch(/x3000c0s3b0n0\s+52:54:00:00:00:03\s+X86\s+compute,gpu\s+true\s+ipmi 10\.1\.0\.13/);
    expect(list.stdout).not.toMatch(/from-/);

    const bad = await runCli(['node', 'register', 'x3000c0s4b0n0', '--mac', 'nope'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/nodes\[0\]\.mac: must be a MAC address/);
    expect(await runCli(['node', 'delete', 'x3000c0s3b0n0'], env)).toMatchObject({ code: 0 });
    expect(await runCli(['node', 'delete', 'x3000c0s3b0n0'], env)).toMatchObject({
      code: 1,
      stderr: 'bootorch: no node "x3000c0s3b0n0"\n',
    });
  });
});
