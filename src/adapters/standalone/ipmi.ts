/**
 * Power over IPMI the way Ironic's ipmitool driver does it: one ipmitool process per call, IPMI v2
 * (`-I lanplus`) with cipher suite 3 (the default suite negotiation costs ~10 s per call against
 * many BMCs, real-nodes §8 F5), the password passed in the environment (`-E`, never on the command
 * line), a deadline per call after which the process is killed, and its output parsed and classified.
 */
import { spawn } from 'node:child_process';
import type { PowerOperation } from '../ports.ts';
import { bmcError, type BmcDriver, type BmcProblem, type BmcTarget } from './bmc.ts';

export interface IpmiOptions {
  /** The ipmitool binary (default `ipmitool`). */
  binary?: string;
  /** Deadline of one ipmitool call in ms (default 15000). */
  timeoutMs?: number;
}

const COMMANDS: Record<PowerOperation, string[]> = {
  On: ['chassis', 'power', 'on'],
  'Soft-Off': ['chassis', 'power', 'soft'],
  'Force-Off': ['chassis', 'power', 'off'],
};

export class IpmiTool implements BmcDriver {
  constructor(private readonly o: IpmiOptions = {}) {}

  async powerState(t: BmcTarget): Promise<'on' | 'off'> {
    const out = await this.run(t, ['chassis', 'power', 'status']);
    const m = /Chassis Power is (on|off)/i.exec(out);
    if (!m) throw bmcError('ipmitool', 'chassis power status', t, 'unexpected_answer', out.trim().slice(0, 200));
    return m[1]!.toLowerCase() as 'on' | 'off';
  }

  async power(t: BmcTarget, op: PowerOperation): Promise<void> {
    // Network boot for the next boot only; the BMC forgets it after one boot, as Ironic sets it.
    if (op === 'On') await this.run(t, ['chassis', 'bootdev', 'pxe']);
    const out = await this.run(t, COMMANDS[op]);
    if (!/Chassis Power Control:/i.test(out))
      throw bmcError('ipmitool', COMMANDS[op].join(' '), t, 'unexpected_answer', out.trim().slice(0, 200));
  }

  async bootFromDisk(t: BmcTarget): Promise<void> {
    await this.run(t, ['chassis', 'bootdev', 'disk']);
    const cycle = (await this.powerState(t)) === 'on' ? ['chassis', 'power', 'cycle'] : COMMANDS.On;
    const out = await this.run(t, cycle);
    if (!/Chassis Power Control:/i.test(out)) throw bmcError('ipmitool', cycle.join(' '), t, 'unexpected_answer', out.trim().slice(0, 200));
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

  private run(t: BmcTarget, command: string[]): Promise<string> {
    const timeoutMs = this.o.timeoutMs ?? 15_000;
    // -v: without it ipmitool prints the same line for a wrong password and a BMC that does not answer
    // ("Unable to establish IPMI v2 / RMCP+ session"); with it, the RAKP or Get Auth Capabilities line
    // before it tells them apart (classifyIpmitool).
    const args = [
      '-v',
      '-I',
      'lanplus',
      '-C',
      '3',
      ...IpmiTool.retryArgs(timeoutMs),
      ...IpmiTool.hostArgs(t.address),
      '-U',
      t.username,
      '-E',
      ...command,
    ];
    const call = command.join(' ');
    return new Promise((resolve, reject) => {
      const child = spawn(this.o.binary ?? 'ipmitool', args, {
        env: { PATH: process.env.PATH, IPMI_PASSWORD: t.password },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(bmcError('ipmitool', call, t, 'bmc_error', `cannot run ipmitool: ${e.message}`));
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
