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

  private run(t: BmcTarget, command: string[]): Promise<string> {
    const args = ['-I', 'lanplus', '-C', '3', ...IpmiTool.hostArgs(t.address), '-U', t.username, '-E', ...command];
    const call = command.join(' ');
    const timeoutMs = this.o.timeoutMs ?? 15_000;
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
        reject(
          bmcError(
            'ipmitool',
            call,
            t,
            classifyIpmitool(out),
            `${out.trim().split('\n').slice(-2).join(' | ').slice(0, 300)} (exit ${code})`,
          ),
        );
      });
    });
  }
}

/** ipmitool's error texts, to a problem kind. */
export function classifyIpmitool(output: string): BmcProblem {
  if (/RAKP|unauthori[sz]ed|invalid (user|password)|password|authentication/i.test(output)) return 'refused_login';
  if (/Unable to establish|no response|connection refused|Address lookup|Get Auth Capabilities/i.test(output)) return 'unreachable';
  if (/timeout|timed out/i.test(output)) return 'timeout';
  return 'bmc_error';
}
