/**
 * One node's serial console over IPMI Serial-over-LAN: a long-lived `ipmitool -I lanplus sol activate`
 * (cipher suite 3, the password in the environment as the power calls pass it, adapters/standalone/
 * ipmi.ts), its output handed to `onText` as it arrives. When the process ends (the BMC dropped the
 * session, the network went away) or does not say "SOL Session operational" within the activation
 * deadline, the session is deactivated (a BMC keeps one SOL payload per node: a session left behind
 * refuses the next with "SOL payload already active") and activated again after a jittered backoff that
 * doubles up to a ceiling and starts over once a session has held that long (backoff.ts). A session silent too long is activated
 * again (reactivateIfIdle). `stop()` ends it for good.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { IpmiTool } from '../adapters/standalone/ipmi.ts';
import type { BmcTarget } from '../adapters/standalone/bmc.ts';
import { Backoff } from './backoff.ts';

export interface SolOptions {
  /** The ipmitool binary (default `ipmitool`). */
  binary?: string;
  /** A session not operational this long after starting is ended and tried again, ms (default 20000). */
  activateTimeoutMs?: number;
  /** First wait before trying again, ms (default 1000); doubles up to maxBackoffMs. */
  backoffMs?: number;
  /** Longest wait before trying again, ms (default 60000). */
  maxBackoffMs?: number;
}

export type SolState = 'connecting' | 'operational' | 'waiting';

const OPERATIONAL = /SOL Session operational/;
/** ipmitool's own lines, not the node's: left out of the console text. */
const CHATTER =
  /^(tcgetattr: Inappropriate ioctl for device|\[SOL Session operational\.[^\]]*\]|Info: SOL payload already active on another session)\r?\n/gm;

export class SolSession {
  state: SolState = 'connecting';
  /** Sessions that ended and were started again. */
  reconnects = 0;
  lastError = '';
  private child?: ChildProcess;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private readonly backoff: Backoff;
  /** When the current session became operational (undefined: it has not). */
  private openedAt?: number;
  /** When the session last printed something (or became operational), ms since the epoch. */
  private lastTextAt = 0;

  constructor(
    private readonly target: BmcTarget,
    private readonly onText: (text: string) => void,
    private readonly o: SolOptions = {},
  ) {
    this.backoff = new Backoff(o.backoffMs ?? 1000, o.maxBackoffMs ?? 60_000);
    this.start();
  }

  private args(command: string[]): string[] {
    return ['-I', 'lanplus', '-C', '3', ...IpmiTool.hostArgs(this.target.address), '-U', this.target.username, '-E', ...command];
  }

  /**
   * ipmitool writes the console through stdio, which a pipe makes block-buffered: a boot's lines would
   * sit in its buffer (and die with it). `stdbuf -o0` (coreutils) makes its output unbuffered.
   */
  private spawn(command: string[]): ChildProcess {
    return spawn('stdbuf', ['-o0', this.o.binary ?? 'ipmitool', ...this.args(command)], {
      env: { PATH: process.env.PATH, IPMI_PASSWORD: this.target.password },
      // stdin stays an open pipe nobody writes to: ipmitool ends the session when its input closes.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  }

  private start(): void {
    if (this.stopped) return;
    this.state = 'connecting';
    const child = this.spawn(['sol', 'activate']);
    this.child = child;
    let operational = false;
    let pending = '';
    const deadline = setTimeout(() => {
      if (!operational) {
        this.lastError = `SOL not operational within ${(this.o.activateTimeoutMs ?? 20_000) / 1000} s`;
        child.kill('SIGKILL');
      }
    }, this.o.activateTimeoutMs ?? 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      let s = d.toString('utf8');
      if (!operational) {
        pending += s;
        if (!OPERATIONAL.test(pending)) {
          if (pending.length > 4096) pending = pending.slice(-4096);
          return;
        }
        operational = true;
        this.state = 'operational';
        this.lastTextAt = Date.now();
        this.openedAt = Date.now();
        s = pending.slice(pending.search(OPERATIONAL));
        s = s.slice(s.indexOf(']') + 1).replace(/^\r?\n/, '');
        pending = '';
      }
      this.lastTextAt = Date.now();
      s = s.replace(CHATTER, '');
      if (s) this.onText(s);
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString('utf8')).slice(-500);
    });
    child.on('error', (e) => {
      this.lastError = `cannot run ipmitool: ${e.message}`;
    });
    child.on('close', (code) => {
      clearTimeout(deadline);
      if (this.child === child) this.child = undefined;
      if (this.stopped) return;
      const last = err
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !/^tcgetattr/.test(l))
        .pop();
      if (last || code) this.lastError = last ?? `ipmitool exited ${code}`;
      this.retry();
    });
  }

  /** Deactivate whatever session the BMC still holds, wait the backoff, activate again. */
  private retry(): void {
    this.state = 'waiting';
    this.reconnects++;
    this.backoff.ended(this.openedAt);
    this.openedAt = undefined;
    const wait = this.backoff.next();
    const deactivate = this.spawn(['sol', 'deactivate']);
    deactivate.stdin!.end();
    const kill = setTimeout(() => deactivate.kill('SIGKILL'), 15_000);
    deactivate.on('error', () => {});
    deactivate.on('close', () => {
      clearTimeout(kill);
      if (!this.stopped) this.timer = setTimeout(() => this.start(), wait);
    });
  }

  /**
   * Activate again when an operational session has printed nothing for `idleMs`. ipmitool does not
   * notice a session the BMC ended (another client's `sol deactivate`, a BMC reset): it stays up and
   * silent. A quiet console so costs one re-activation per period, and a lost one is back within it.
   */
  reactivateIfIdle(idleMs: number): boolean {
    if (idleMs <= 0 || this.state !== 'operational' || !this.child || Date.now() - this.lastTextAt < idleMs) return false;
    this.lastError = `no console output for ${Math.round(idleMs / 1000)} s: activated again`;
    this.child.kill('SIGKILL');
    return true;
  }

  /** End the session for good: the process is killed and the BMC's payload deactivated (at most 5 s). */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.child) return Promise.resolve();
    this.child.kill('SIGKILL');
    this.child = undefined;
    return new Promise((resolve) => {
      const deactivate = this.spawn(['sol', 'deactivate']);
      deactivate.stdin!.end();
      const kill = setTimeout(() => deactivate.kill('SIGKILL'), 5000);
      deactivate.on('error', () => {});
      deactivate.on('close', () => {
        clearTimeout(kill);
        resolve();
      });
    });
  }
}
