/**
 * A process that started the embedded PostgreSQL and ends without stop() leaves no server behind:
 * src/db/embedded.ts signals the server named by its postmaster.pid on exit (the package keeps its
 * child process private), and keeps the process's own exit code.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { ROOT } from '../helpers/processes.ts';
import { freePort } from '../helpers/ports.ts';
import { waitFor } from '../helpers/wait.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootorch-embedded-exit-'));
let server: number | undefined;

afterAll(() => {
  if (server !== undefined && running(server)) process.kill(server, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Whether `pid` is a live process (an exited child nobody reaped, a zombie, is not). */
function running(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

test('the server stops when the process that started it exits without stop()', async () => {
  const probe = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/embedded-exit-probe.ts', dir, String(await freePort())], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  probe.stdout.on('data', (c: Buffer) => (out += c));
  probe.stderr.on('data', (c: Buffer) => (out += c));
  const code = await new Promise<number | null>((resolve) => probe.once('exit', resolve));
  const pid = /server (\d+)/.exec(out)?.[1];
  expect(pid, out).toBeDefined();
  server = Number(pid);
  expect(code).toBe(3);
  await waitFor(
    async () => !running(server!),
    `postgres ${server} to stop`,
    30_000,
    () => out,
  );
  expect(fs.existsSync(path.join(dir, 'pg', 'postmaster.pid'))).toBe(false);
}, 180_000);
