/**
 * Long-lived `ipmitool ... shell` processes, one per BMC and user, fed one command at a time: a shell
 * pays ipmitool's start (its IANA registry) and the RMCP+ session once instead of on every call
 * (BENCHMARKS.md, "IPMI at scale": 12.5 ms of CPU a call against 101.8 ms for a process per call).
 * - A shell's stderr goes into its stdout (`2>&1`, so an error line is never read after the prompt that
 *   ends it) and everything up to the next `ipmitool> ` prompt is the command's answer.
 * - ipmitool's shell does not end at the end of its input (it spins on it), so it is started under
 *   `setpriv --pdeathsig KILL` where util-linux has it, and killed at this process's exit in any case:
 *   a worker that dies leaves no shell behind.
 * - The pool closes a shell idle for `idleMs` (a BMC has few sessions to give) and keeps at most
 *   `maxShells` open, closing the least recently used idle one to start another; when every shell is
 *   busy it has none to give and the caller runs a process of its own.
 * The password is in the environment (`-E`), never on a command line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';

const PROMPT = 'ipmitool> ';

/** The shell ended (its session could not be set up, or it died): its exit and what it printed. */
export class ShellExited extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly output: string,
    /** The spawn's own error, when ipmitool could not be started (its code says why: ENOENT, EMFILE). */
    readonly cause?: Error,
  ) {
    super(`ipmitool shell exited (${signal ?? code})`);
  }
}

/** No prompt within the deadline: the shell was killed. */
export class ShellTimedOut extends Error {}

/** Every shell alive in this process, killed at its exit (no orphan holds a session or spins). */
const alive = new Set<ChildProcess>();
let exitHook = false;

/** `setpriv --pdeathsig KILL` when util-linux has it on PATH (checked once). */
let launcher: string[] | undefined;
function launcherArgs(): string[] {
  if (!launcher) {
    const found = (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
      try {
        accessSync(path.join(dir, 'setpriv'), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
    launcher = found ? ['setpriv', '--pdeathsig', 'KILL', 'sh'] : ['sh'];
  }
  return launcher;
}

/** One `ipmitool ... shell`: a command in, its output up to the next prompt out. */
export class IpmiShell {
  readonly proc: ChildProcess;
  /** The password the session was opened with (a changed one needs a new shell). */
  readonly password: string;
  private out = '';
  private waiter?: { resolve: (s: string) => void; reject: (e: Error) => void };
  private readonly ready: Promise<void>;
  private ended?: ShellExited;
  private readonly closed: Promise<void>;

  /** `args`: ipmitool's options before `shell` (interface, host, user, `-E`). */
  constructor(binary: string, args: string[], password: string) {
    this.password = password;
    const [cmd, ...pre] = launcherArgs();
    this.proc = spawn(cmd!, [...pre, '-c', 'exec "$0" "$@" 2>&1', binary, ...args, 'shell'], {
      env: { PATH: process.env.PATH, IPMI_PASSWORD: password },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    alive.add(this.proc);
    // Listened for first: a spawn that failed for want of files (EMFILE) has no stdio, and says so
    // with an 'error' on the next tick, which unheard would end this process.
    this.closed = new Promise((resolve) => {
      const end = (e: ShellExited) => {
        alive.delete(this.proc);
        this.ended ??= e;
        this.waiter?.reject(this.ended);
        this.waiter = undefined;
        resolve();
      };
      this.proc.on('error', (e) => end(new ShellExited(null, null, `cannot run ipmitool: ${e.message}`, e)));
      this.proc.on('close', (code, signal) => end(new ShellExited(code, signal, this.out)));
    });
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const p of alive) p.kill('SIGKILL');
      });
    }
    // An idle shell does not keep this process running; a call in flight does (its deadline timer).
    this.proc.unref();
    (this.proc.stdout as Socket | null)?.unref();
    (this.proc.stdin as Socket | null)?.unref();
    this.proc.stdin?.on('error', () => {}); // EPIPE after it died: its close says why
    // The first prompt is printed once the RMCP+ session is up; what came before it is ipmitool's start.
    this.ready = new Promise((resolve, reject) => (this.waiter = { resolve: () => resolve(), reject }));
    this.ready.catch(() => {});
    this.proc.stdout?.on('data', (d: Buffer) => {
      this.out += d.toString();
      if (!this.out.endsWith(PROMPT)) return;
      const text = this.out.slice(0, -PROMPT.length);
      this.out = '';
      const w = this.waiter;
      this.waiter = undefined;
      w?.resolve(text);
    });
  }

  get exited(): boolean {
    return this.ended !== undefined;
  }

  /**
   * Waits for the session (the first prompt), then runs `command` (none: only the wait) and returns
   * what it printed, its echo left out. Rejects with ShellExited when the shell ends first, and with
   * ShellTimedOut after `ms` in all, the shell then killed.
   */
  call(command: string | undefined, ms: number): Promise<string> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (f: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        f();
      };
      const timer = setTimeout(
        () =>
          settle(() => {
            this.kill();
            reject(new ShellTimedOut(`no prompt within ${ms} ms`));
          }),
        ms,
      );
      this.ready.then(
        () => {
          if (settled) return;
          if (this.ended) return settle(() => reject(this.ended));
          if (command === undefined) return settle(() => resolve(''));
          this.waiter = {
            resolve: (text) => settle(() => resolve(text.replace(/^[^\n]*\n/, (line) => (line.trim() === command ? '' : line)))),
            reject: (e) => settle(() => reject(e)),
          };
          this.proc.stdin!.write(`${command}\n`);
        },
        (e: Error) => settle(() => reject(e)),
      );
    });
  }

  /** Ends the session (`quit`), killing the shell if it has not gone within 2 s. */
  async close(): Promise<void> {
    if (this.ended) return;
    this.proc.stdin?.end('quit\n');
    const timer = setTimeout(() => this.kill(), 2000);
    timer.unref();
    await this.closed;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.ended) this.proc.kill('SIGKILL');
  }
}

export interface IpmiShellPoolOptions {
  /** The ipmitool binary (default `ipmitool`). */
  binary?: string;
  /** A shell idle this long is closed, ms (default 30000; BOOTORCH_IPMI_SHELL_IDLE). */
  idleMs?: number;
  /** Shells open at once at most, idle or busy (default 128; BOOTORCH_IPMI_SHELLS). */
  maxShells?: number;
}

interface Entry {
  shell: IpmiShell;
  busy: boolean;
  idle?: NodeJS.Timeout;
}

/** Shells by BMC and user (`key`), least recently used first. */
export class IpmiShellPool {
  private readonly entries = new Map<string, Entry>();
  private readonly binary: string;
  private readonly idleMs: number;
  private readonly maxShells: number;
  /** Shells started in this pool's life. */
  started = 0;

  constructor(o: IpmiShellPoolOptions = {}) {
    this.binary = o.binary ?? 'ipmitool';
    this.idleMs = o.idleMs ?? 30_000;
    this.maxShells = o.maxShells ?? 128;
  }

  /** Shells open now. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The shell of `key` for one call, marked busy until give() or drop(): its own if idle and alive
   * (and opened with this password), else a new one; none when its shell is busy, or when the pool is
   * full of busy shells.
   */
  take(key: string, args: string[], password: string): IpmiShell | undefined {
    const e = this.entries.get(key);
    if (e?.busy) return undefined;
    if (e && !e.shell.exited && e.shell.password === password) {
      clearTimeout(e.idle);
      e.busy = true;
      this.entries.delete(key);
      this.entries.set(key, e);
      return e.shell;
    }
    if (e) this.remove(key, e);
    if (this.entries.size >= this.maxShells) {
      const lru = [...this.entries].find(([, x]) => !x.busy);
      if (!lru) return undefined;
      this.remove(lru[0], lru[1]);
    }
    const shell = new IpmiShell(this.binary, args, password);
    this.started++;
    this.entries.set(key, { shell, busy: true });
    // A shell that dies (BMC reset, session lost) leaves the pool; the next call starts another.
    shell.proc.once('close', () => {
      const now = this.entries.get(key);
      if (now?.shell === shell) {
        clearTimeout(now.idle);
        this.entries.delete(key);
      }
    });
    return shell;
  }

  /** The call is done and the shell fit for the next: it waits idle, closed after idleMs. */
  give(key: string, shell: IpmiShell): void {
    const e = this.entries.get(key);
    if (e?.shell !== shell) return void shell.close();
    e.busy = false;
    e.idle = setTimeout(() => this.remove(key, e), this.idleMs);
    e.idle.unref();
  }

  /** The shell is not fit for another call (it timed out, or its answer was a failure): close it. */
  drop(key: string, shell: IpmiShell): void {
    const e = this.entries.get(key);
    if (e?.shell === shell) this.remove(key, e);
    else shell.kill();
  }

  /** Closes every shell. */
  async close(): Promise<void> {
    await Promise.all([...this.entries].map(([key, e]) => this.remove(key, e)));
  }

  private remove(key: string, e: Entry): Promise<void> {
    clearTimeout(e.idle);
    if (this.entries.get(key) === e) this.entries.delete(key);
    return e.shell.close();
  }
}
