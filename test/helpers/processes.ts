/**
 * bootorch roles as real child processes (`node --import tsx src/main.ts <role>`), for tests that
 * need several processes on one database. Output is kept for the failure message; stop() sends
 * SIGTERM to that child only and waits for it to exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface RoleProcess {
  proc: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves with the first stdout match of `re` (waiting for it); rejects at the deadline or on exit. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

/** The sources through tsx (the default), or the compiled CLI as installed: bin/bootorch.mjs over dist/. */
export const SOURCES = ['--import', 'tsx', 'src/main.ts'];
export const COMPILED = ['bin/bootorch.mjs'];

/**
 * `env` is added to this process's environment; a key given as undefined is removed from it.
 * `nodeArgs` go to node itself (e.g. --cpu-prof, which NODE_OPTIONS does not take). `root` is the
 * checkout the role runs from (another release's, test/helpers/previous-release.ts), this one by default.
 */
export function startRole(
  role: string,
  env: Record<string, string | undefined>,
  args: string[] = [],
  nodeArgs: string[] = [],
  entry: string[] = SOURCES,
  root: string = ROOT,
): RoleProcess {
  const merged: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn', ...env };
  for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
  const proc = spawn(process.execPath, [...nodeArgs, ...entry, role, ...args], {
    cwd: root,
    env: merged as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const poke = () => {
    for (const l of [...listeners]) l();
  };
  proc.stdout!.on('data', (d) => {
    out += d;
    poke();
  });
  proc.stderr!.on('data', (d) => {
    out += d;
    poke();
  });
  proc.on('exit', poke);
  return {
    proc,
    output: () => out,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(re);
          if (m) {
            done();
            resolve(m);
          } else if (proc.exitCode !== null) {
            done();
            reject(new Error(`${role} exited (${proc.exitCode}):\n${out}`));
          }
        };
        const deadline = setTimeout(() => {
          done();
          reject(new Error(`${role}: ${re} not seen within ${timeoutMs} ms:\n${out}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(deadline);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const deadline = setTimeout(() => proc.kill('SIGKILL'), 15_000);
        proc.once('exit', () => {
          clearTimeout(deadline);
          resolve();
        });
        proc.kill('SIGTERM');
      });
    },
  };
}

/** p-th percentile (0-100) of the values, nearest rank. */
export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `bootorch <args>` to completion (the deadline kills it). */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
  entry = SOURCES,
  root: string = ROOT,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...entry, ...args], {
      // No dev token file (.data/dev-admin-token) is picked up unless a test says so.
      cwd: root,
      env: { ...process.env, BOOTORCH_URL: '', BOOTORCH_TOKEN: '', BOOTORCH_DATA_DIR: '/nonexistent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout!.on('data', (d) => {
      stdout += d;
    });
    proc.stderr!.on('data', (d) => {
      stderr += d;
    });
    const deadline = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`bootorch ${args.join(' ')}: no exit within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    proc.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
  });
}
