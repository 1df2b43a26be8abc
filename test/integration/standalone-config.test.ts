/**
 * Configuration hooks with CFS's semantics: nothing runs before the node reports the boot bootorch
 * set (disabled + pending, as BOS's power-on leaves CFS), one run for the nodes enabled together,
 * exit 0 = configured, failures counted and retried up to the retry policy, then failed; a name
 * with no hook is a configuration that does not exist. The state is in the database: a second
 * instance (another process) reads the same answers.
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { StandaloneConfig } from '../../src/adapters/standalone/config.ts';
import { StandaloneBootParams } from '../../src/adapters/standalone/boot-params.ts';

const A = 'x3000c0s1b0n0';
const B = 'x3000c0s2b0n0';
const C = 'x3000c0s3b0n0';
let db: TestDb;
let dir: string;
let runs: { name: string; ids: string[]; code: number | null }[];
let config: StandaloneConfig;

beforeAll(async () => {
  db = await freshDb();
  dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-hooks-'));
  writeFileSync(path.join(dir, 'ok'), `#!/bin/sh\necho "$@" >> ${dir}/ok.log\nenv > ${dir}/ok.env\n`, { mode: 0o755 });
  // A credential in bootorch's environment that a hook must not inherit.
  process.env.CSM_TOKEN = 'csm-token-marker';
  writeFileSync(path.join(dir, 'bad'), '#!/bin/sh\necho "no such playbook" >&2\nexit 3\n', { mode: 0o755 });
  writeFileSync(path.join(dir, 'not-executable'), '#!/bin/sh\n', { mode: 0o644 });
  const r = await new NodeRegistry(undefined).register(
    db.db,
    [A, B, C].map((xname, i) => ({ xname, mac: `52:54:00:00:04:0${i}` })),
  );
  expect(r.ok).toBe(true);
  await db.pool.query(`insert into components (id) values ($1), ($2), ($3)`, [A, B, C]);
  runs = [];
  config = new StandaloneConfig(db.db, {
    hooksDir: dir,
    batchWindowMs: 50,
    onHookDone: (name, ids, code) => runs.push({ name, ids, code }),
  });
});
afterAll(async () => {
  await config?.close();
  await db?.drop();
});

const status = async (id: string) => (await config.getComponents([id]))[0]!;
/** The node booted what bootorch set: the boot parameters' token reported on its component. */
const boots = async (ids: string[]) => {
  const { token } = await new StandaloneBootParams(db.db).setBootParameters({ hosts: ids, kernel: 'k', initrd: '', params: '' });
  await db.pool.query(`update components set actual_bss_token = $1 where id = any($2::text[])`, [token, ids]);
};

describe('configuration hooks', () => {
  it('knows which configurations exist', async () => {
    expect(await config.configurationExists('ok')).toBe(true);
    for (const name of ['missing', 'not-executable', '../ok', '']) expect(await config.configurationExists(name)).toBe(false);
    expect(await config.getComponents(['x9000c0s0b0n0'])).toEqual([]);
    expect(await status(A)).toMatchObject({ desiredConfig: '', configurationStatus: 'unconfigured', enabled: true });
  });

  it('waits for the boot report, then runs once for the nodes enabled together', async () => {
    expect(
      await config.patchComponents([A, B, 'x9000c0s0b0n0'], {
        enabled: false,
        desiredConfig: 'ok',
        tags: { bos_session: 's1' },
        clearState: true,
      }),
    ).toEqual([A, B]);
    await config.getComponents([A, B]);
    await config.idle();
    expect(runs).toEqual([]);
    expect(await status(A)).toMatchObject({ configurationStatus: 'pending', enabled: false, tags: { bos_session: 's1' } });
    await boots([A, B]);
    await config.getComponents([A, B]);
    await config.idle();
    expect(runs).toEqual([{ name: 'ok', ids: [A, B], code: 0 }]);
    const env = readFileSync(path.join(dir, 'ok.env'), 'utf8');
    expect(env).toMatch(/^PATH=/m);
    expect(env).not.toContain('csm-token-marker');
    expect(readFileSync(path.join(dir, 'ok.log'), 'utf8')).toBe(`${A} ${B}\n`);
    expect(await status(B)).toMatchObject({ configurationStatus: 'configured', enabled: true, errorCount: 0 });
    const elsewhere = new StandaloneConfig(db.db, { hooksDir: dir });
    expect((await elsewhere.getComponents([B]))[0]).toMatchObject({
      desiredConfig: 'ok',
      configurationStatus: 'configured',
      tags: { bos_session: 's1' },
    });
  });

  it('counts failures, retries to the retry policy, then reports failed', async () => {
    runs.length = 0;
    await config.patchComponents([C], { enabled: true, desiredConfig: 'bad', clearState: true });
    await config.idle();
    expect(runs.map((r) => r.code)).toEqual([3, 3, 3]);
    expect(await status(C)).toMatchObject({ configurationStatus: 'failed', errorCount: 3 });
    // A new desired configuration starts over.
    await config.patchComponents([C], { enabled: true, desiredConfig: 'ok' });
    await config.idle();
    expect(await status(C)).toMatchObject({ configurationStatus: 'configured', errorCount: 0 });
  });

  it('an API process (runHooks false) may notice the boot; the worker runs the hook at its next read', async () => {
    runs.length = 0;
    await config.patchComponents([A], { enabled: false, desiredConfig: 'ok', clearState: true });
    await boots([A]);
    const api = new StandaloneConfig(db.db, {
      hooksDir: dir,
      batchWindowMs: 50,
      onHookDone: () => {
        throw new Error('the API ran a hook');
      },
      runHooks: false,
    });
    expect((await api.getComponents([A]))[0]).toMatchObject({ configurationStatus: 'pending', enabled: true });
    await api.idle();
    expect(runs).toEqual([]);
    await config.getComponents([A]);
    await config.idle();
    expect(runs).toEqual([{ name: 'ok', ids: [A], code: 0 }]);
    expect((await api.getComponents([A]))[0]!.configurationStatus).toBe('configured');
  });

  it('a configuration with no hook reads as unconfigured (BOS: configuration_unknown)', async () => {
    await config.patchComponents([C], { enabled: true, desiredConfig: 'missing' });
    expect((await status(C)).configurationStatus).toBe('unconfigured');
    expect(existsSync(path.join(dir, 'missing'))).toBe(false);
  });
});
