/**
 * Power over IPMI with ipmitool: IPMI v2 (`-I lanplus`) with cipher suite 3 (the default suite
 * negotiation costs ~10 s per call against many BMCs, real-nodes §8 F5), the password passed in the
 * environment (`-E`, never on the command line), a deadline per call, and the output parsed and
 * classified. Two ways to run a call:
 * - `shell` (the default): a command to the BMC's long-lived `ipmitool shell` (ipmi-shell.ts), about 8×
 *   less CPU a call (BENCHMARKS.md, "IPMI at scale"). A shell gives no exit code, so a command worked
 *   when ipmitool printed its answer (ANSWER); when it did not, the shell is replaced and the new one's
 *   session set-up says whether the BMC is there (the failure then classified as a process's would be);
 * - `process`: one ipmitool process per call, as Ironic's ipmitool driver does (for BMCs that do not
 *   get on with a long session).
 */
import { spawn } from 'node:child_process';
import type { PowerOperation } from '../ports.ts';
import { bmcKey } from './bmc-guard.ts';
import { bmcError, localFailure, type BmcDriver, type BmcProblem, type BmcTarget } from './bmc.ts';
import { IpmiShellPool, ShellExited, ShellTimedOut, type IpmiShell } from './ipmi-shell.ts';

export type IpmiMode = 'shell' | 'process';

export interface IpmiOptions {
  /** The ipmitool binary (default `ipmitool`). */
  binary?: string;
  /** Deadline of one ipmitool call in ms (default 15000). */
  timeoutMs?: number;
  /** `shell` (default) or `process` per call (BOOTORCH_IPMI_MODE). */
  mode?: IpmiMode;
  /** Shell mode: an idle shell is closed after this long, ms (default 30000). */
  shellIdleMs?: number;
  /** Shell mode: shells open at most (default 128). */
  maxShells?: number;
}

/** What ipmitool prints when a command worked (in a shell, the only sign that it did). */
const ANSWER = {
  status: /Chassis Power is (on|off)/i,
  control: /Chassis Power Control:/i,
  // ipmitool exits 0 when the BMC refuses a boot parameter (ipmi_sim without a chassis program does),
  // so a process per call goes on to the power command; a shell does the same.
  bootdev: /Set Boot Device to|Set Chassis Boot Parameter \d+ failed:/i,
};

function answerOf(command: string[]): RegExp {
  if (command[1] === 'bootdev') return ANSWER.bootdev;
  return command[2] === 'status' ? ANSWER.status : ANSWER.control;
}

const COMMANDS: Record<PowerOperation, string[]> = {
  On: ['chassis', 'power', 'on'],
  'Soft-Off': ['chassis', 'power', 'soft'],
  'Force-Off': ['chassis', 'power', 'off'],
};

export class IpmiTool implements BmcDriver {
  /** The shells (shell mode). */
  readonly shells?: IpmiShellPool;

  constructor(private readonly o: IpmiOptions = {}) {
    if ((o.mode ?? 'shell') === 'shell')
      this.shells = new IpmiShellPool({ binary: o.binary, idleMs: o.shellIdleMs, maxShells: o.maxShells });
  }

  /** Closes the shells (shell mode); a later call opens new ones. */
  async close(): Promise<void> {
    await this.shells?.close();
  }

  async powerState(t: BmcTarget): Promise<'on' | 'off'> {
    const out = await this.run(t, ['chassis', 'power', 'status']);
    const m = ANSWER.status.exec(out);
    if (!m) throw bmcError('ipmitool', 'chassis power status', t, 'unexpected_answer', out.trim().slice(0, 200));
    return m[1]!.toLowerCase() as 'on' | 'off';
  }

  async power(t: BmcTarget, op: PowerOperation): Promise<void> {
    // Network boot for the next boot only; the BMC forgets it after one boot, as Ironic sets it.
    if (op === 'On') await this.run(t, ['chassis', 'bootdev', 'pxe']);
    const out = await this.run(t, COMMANDS[op]);
    if (!ANSWER.control.test(out)) throw bmcError('ipmitool', COMMANDS[op].join(' '), t, 'unexpected_answer', out.trim().slice(0, 200));
  }

  async bootFromDisk(t: BmcTarget): Promise<void> {
    await this.run(t, ['chassis', 'bootdev', 'disk']);
    const cycle = (await this.powerState(t)) === 'on' ? ['chassis', 'power', 'cycle'] : COMMANDS.On;
    const out = await this.run(t, cycle);
    if (!ANSWER.control.test(out)) throw bmcError('ipmitool', cycle.join(' '), t, 'unexpected_answer', out.trim().slice(0, 200));
  }

  /**
   * A read-only command (`fru print 0`, `mc info`) in a process of its own: its output is whatever
   * ipmitool prints, so no shell could tell an answer from a failure. Failures classified as power's.
   */
  query(t: BmcTarget, command: string[]): Promise<string> {
    return this.runProcess(t, command, this.o.timeoutMs ?? 15_000);
  }

  /** host[:port] -> -H host -p port (IPv6 as [addr]:port). */
  static hostArgs(address: string): string[] {
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(address) ?? /^([^:]+)(?::(\d+))?$/.exec(address);
    if (!m) return ['-H', address];
    return m[2] ? ['-H', m[1]!, '-p', m[2]] : ['-H', m[1]!];
  }

  /**
   * ipmitool's own retries, fitted inside the deadline so a BMC that does not answer is reported as
   * such by ipmitool (unreachable), not killed by the deadline (timeout): with `-N 1 -R r`, ipmitool
   * 1.8.19 gives up on a silent BMC after about r(r+1) s (2, 6, 12 s measured for r = 1, 2, 3).
   */
  static retryArgs(timeoutMs: number): string[] {
    let r = 1;
    while ((r + 1) * (r + 2) * 1000 <= timeoutMs * 0.8 && r < 5) r++;
    return ['-N', '1', '-R', String(r)];
  }

  /**
   * ipmitool's options before the command. -v: without it ipmitool prints the same line for a wrong
   * password and a BMC that does not answer ("Unable to establish IPMI v2 / RMCP+ session"); with it,
   * the RAKP or Get Auth Capabilities line before it tells them apart (classifyIpmitool).
   */
  private sessionArgs(t: BmcTarget, timeoutMs: number): string[] {
    return ['-v', '-I', 'lanplus', '-C', '3', ...IpmiTool.retryArgs(timeoutMs), ...IpmiTool.hostArgs(t.address), '-U', t.username, '-E'];
  }

  private run(t: BmcTarget, command: string[]): Promise<string> {
    const timeoutMs = this.o.timeoutMs ?? 15_000;
    const key = `${t.username}@${bmcKey(t.address)}`;
    const shell = this.shells?.take(key, this.sessionArgs(t, timeoutMs), t.password);
    // Process mode; or this BMC's shell is busy (a caller without the guard), or every shell is.
    if (!shell) return this.runProcess(t, command, timeoutMs);
    return this.runInShell(t, command, timeoutMs, key, shell);
  }

  private async runInShell(t: BmcTarget, command: string[], timeoutMs: number, key: string, shell: IpmiShell): Promise<string> {
    const pool = this.shells!;
    const call = command.join(' ');
    const deadline = Date.now() + timeoutMs;
    let out: string;
    try {
      out = await shell.call(call, timeoutMs);
    } catch (e) {
      pool.drop(key, shell);
      throw this.shellFailure(t, call, timeoutMs, e);
    }
    if (answerOf(command).test(out)) {
      pool.give(key, shell);
      return out;
    }
    // No answer: the BMC refused the command, or the session is gone (a BMC reset prints only
    // "Unable to get Chassis Power Status"). A new shell's session set-up tells them apart.
    pool.drop(key, shell);
    const fresh = pool.take(key, this.sessionArgs(t, Math.max(1000, deadline - Date.now())), t.password);
    if (fresh) {
      try {
        await fresh.call(undefined, Math.max(1, deadline - Date.now()));
        pool.give(key, fresh);
      } catch (e) {
        pool.drop(key, fresh);
        throw this.shellFailure(t, call, timeoutMs, e);
      }
    }
    throw bmcError('ipmitool', call, t, classifyIpmitool(out), `${ipmitoolMessage(out)} (ipmitool shell)`);
  }

  /** A shell that timed out or ended, as the error a process per call would have given. */
  private shellFailure(t: BmcTarget, call: string, timeoutMs: number, e: unknown): Error {
    if (e instanceof ShellTimedOut) return bmcError('ipmitool', call, t, 'timeout', `no answer within ${timeoutMs / 1000} s`);
    if (e instanceof ShellExited) {
      const local = localFailure(e.cause);
      if (local) return bmcError('ipmitool', call, t, 'local_resources', local);
      if (e.code === null && e.signal === null) return bmcError('ipmitool', call, t, 'bmc_error', e.output);
      return bmcError('ipmitool', call, t, classifyIpmitool(e.output), `${ipmitoolMessage(e.output)} (exit ${e.signal ?? e.code})`);
    }
    return e instanceof Error ? e : new Error(String(e));
  }

  private runProcess(t: BmcTarget, command: string[], timeoutMs: number): Promise<string> {
    const args = [...this.sessionArgs(t, timeoutMs), ...command];
    const call = command.join(' ');
    return new Promise((resolve, reject) => {
      const child = spawn(this.o.binary ?? 'ipmitool', args, {
        env: { PATH: process.env.PATH, IPMI_PASSWORD: t.password },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      // A spawn that failed for want of files (EMFILE) has no stdio: its 'error' (next tick) says why.
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        const local = localFailure(e);
        reject(bmcError('ipmitool', call, t, local ? 'local_resources' : 'bmc_error', local ?? `cannot run ipmitool: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (signal === 'SIGKILL') return reject(bmcError('ipmitool', call, t, 'timeout', `no answer within ${timeoutMs / 1000} s`));
        if (code === 0) return resolve(out);
        reject(bmcError('ipmitool', call, t, classifyIpmitool(out), `${ipmitoolMessage(out)} (exit ${code})`));
      });
    });
  }
}

/**
 * ipmitool's error texts (with -v), to a problem kind. ipmitool 1.8.19 against OpenIPMI's ipmi_sim:
 * - wrong password: `> RAKP 2 HMAC is invalid`; unknown user: `RAKP 2 message indicates an error :
 *   unauthorized name`; both then `Error: Unable to establish IPMI v2 / RMCP+ session`;
 * - nothing answering: `Get Auth Capabilities error`, `Error issuing Get Channel Authentication
 *   Capabilities request`, then the same last line. The login is never reached there, so that case
 *   is checked first ("Authentication" is in its text).
 */
export function classifyIpmitool(output: string): BmcProblem {
  if (
    /Get Auth Capabilities|Get Channel Authentication Capabilities|no response|connection refused|Address lookup|No route to host/i.test(
      output,
    )
  )
    return 'unreachable';
  if (/RAKP|unauthori[sz]ed|invalid (user|password)|password|privilege level/i.test(output)) return 'refused_login';
  if (/Unable to establish/i.test(output)) return 'unreachable';
  if (/timeout|timed out/i.test(output)) return 'timeout';
  return 'bmc_error';
}

/** The lines of ipmitool's output that say what went wrong: its -v chatter left out, the last two kept. */
function ipmitoolMessage(out: string): string {
  const lines = out
    .split('\n')
    .map((l) => l.trim())
    .filter(
      (l) =>
        l &&
        !/^Loading IANA PEN Registry|^Running Get VSO Capabilities|^Discovered IPMB address|^Invalid completion code received: Invalid command$/.test(
          l,
        ),
    );
  return lines.slice(-2).join(' | ').slice(0, 300);
}
