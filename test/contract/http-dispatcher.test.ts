/**
 * The CSM clients bring their own connection pool: in a process where Node's own fetch ran before undici
 * was loaded, the global dispatcher is Node's bundled undici, which this undici's redirect interceptor
 * cannot drive (every call failed with UND_ERR_INVALID_ARG in the worker processes).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

it("the clients work, directly and through a redirect, after Node's own fetch ran first", () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/fetch-first-probe.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  expect(out).toEqual({ direct: expect.any(Number), redirected: expect.any(Number) });
  expect(out.direct).toBeGreaterThan(0);
  expect(out.redirected).toBe(out.direct);
});
