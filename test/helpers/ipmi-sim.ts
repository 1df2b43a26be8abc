/**
 * A real BMC for tests without a VM: one OpenIPMI `ipmi_sim` on 127.0.0.1 (RMCP+ over UDP, admin /
 * password, cipher suite 3 as bootorch uses it) whose Serial-over-LAN is wired to a serial line this
 * helper plays: ipmi_sim connects to a TCP server here when a SOL session is activated (lan.conf
 * `sol "tcp:127.0.0.1:PORT"`), and every `write` goes to the connected line as a node's serial port
 * would send it. The line stays up across SOL sessions, like a real node's UART. Killed by PID in stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const SIM_BMC_USER = 'admin';
export const SIM_BMC_PASSWORD = 'password';

/**
 * PIDs of the ipmitool processes `parent` (this process) started and that are still alive: its main
 * thread's children (processes are started from it) named ipmitool. Cheap enough to sample often.
 */
export const ipmitoolChildren = (parent = process.pid): number[] => childrenNamed('ipmitool', parent);

/** PIDs of the live children of `parent`'s main thread whose command is `name` (ipmitool, ipmi_sim). */
export function childrenNamed(name: string, parent = process.pid): number[] {
  let children: string;
  try {
    children = readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8');
  } catch {
    return [];
  }
  return children
    .split(' ')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
      } catch {
        return false; // gone since the listing
      }
    });
}

/** A port free for TCP (and UDP when asked) at the moment of asking. */
export async function freePort(udp = false): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    if (!udp) return port;
    const ok = await new Promise<boolean>((resolve) => {
      const d = createSocket('udp4');
      d.once('error', () => {
        d.close();
        resolve(false);
      });
      d.bind(port, '127.0.0.1', () => d.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

/** The lan.conf lines of one ipmi_sim BMC on 127.0.0.1:`lanPort` with admin / password (real-nodes §6). */
export function lanConf(name: string, lanPort: number, guidIndex: number, extra: string[]): string {
  const guid = `a123456789abcdefa123456789abcd${(guidIndex & 0xff).toString(16).padStart(2, '0')}`;
  return [
    `name "${name}"`,
    'set_working_mc 0x20',
    '  startlan 1',
    `    addr 127.0.0.1 ${lanPort}`,
    '    priv_limit admin',
    ...['callback', 'user', 'operator', 'admin'].map((r) => `    allowed_auths_${r} none md2 md5 straight`),
    `    guid ${guid}`,
    '  endlan',
    ...extra.map((l) => `  ${l}`),
    '  user 1 true  ""      "test"     user  10 none md2 md5 straight',
    `  user 2 true  "${SIM_BMC_USER}" "${SIM_BMC_PASSWORD}" admin 10 none md2 md5 straight`,
    '',
  ].join('\n');
}

export const BMC_EMU = `mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_enable 0x20
`;

/**
 * A FRU image (IPMI Platform Management FRU Information Storage Definition v1.0) with a Product Info
 * Area only: manufacturer, name, part number, version, serial, asset tag, FRU file id, then `extra`
 * custom fields (ipmitool prints them as `Product Extra`). For ipmi_sim's `mc_add_fru_data ... file`.
 */
export function fruImage(p: { manufacturer: string; name: string; serial: string; extra?: string[] }): Buffer {
  const field = (s: string) => Buffer.concat([Buffer.from([0xc0 | Buffer.byteLength(s)]), Buffer.from(s, 'latin1')]);
  const fields = [p.manufacturer, p.name, '', '', p.serial, '', '', ...(p.extra ?? [])].map(field);
  let area = Buffer.concat([Buffer.from([1, 0, 0]), ...fields, Buffer.from([0xc1])]);
  const padded = Math.ceil((area.length + 1) / 8) * 8;
  area = Buffer.concat([area, Buffer.alloc(padded - 1 - area.length)]);
  area[1] = padded / 8;
  const sum = (b: Buffer) => b.reduce((a, x) => a + x, 0);
  area = Buffer.concat([area, Buffer.from([-sum(area) & 0xff])]);
  const header = Buffer.from([1, 0, 0, 0, 1, 0, 0, 0]);
  header[7] = -sum(header) & 0xff;
  return Buffer.concat([header, area]);
}

export class SolBmc {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-solbmc-'));
  /** 127.0.0.1:<udp port>: the BMC address a node is registered with. */
  address = '';
  private sim?: ChildProcess;
  private line?: Server;
  private peers = new Set<Socket>();

  /** `fru`: the BMC's FRU device 0 (fruImage), for discovery's `fru print 0`. */
  static async start(name = 'solnode', index = 1, fru?: Buffer): Promise<SolBmc> {
    const b = new SolBmc();
    await b.open(name, index, fru);
    return b;
  }

  private async open(name: string, index: number, fru?: Buffer): Promise<void> {
    const lanPort = await freePort(true);
    this.line = createServer((s) => {
      this.peers.add(s);
      s.on('error', () => {});
      s.on('close', () => this.peers.delete(s));
      s.on('data', () => {}); // what an operator types: a node would read it
    });
    const linePort = await new Promise<number>((resolve) =>
      this.line!.listen(0, '127.0.0.1', () => resolve((this.line!.address() as { port: number }).port)),
    );
    mkdirSync(path.join(this.dir, 'state'));
    writeFileSync(path.join(this.dir, 'lan.conf'), lanConf(name, lanPort, index, [`sol "tcp:127.0.0.1:${linePort}" 115200`]));
    if (fru) writeFileSync(path.join(this.dir, 'fru.bin'), fru);
    const fruLine = fru ? `mc_add_fru_data 0x20 0 ${fru.length} file 0 "fru.bin"\n` : '';
    writeFileSync(path.join(this.dir, 'bmc.emu'), BMC_EMU.replace('mc_enable 0x20\n', `${fruLine}mc_enable 0x20\n`));
    this.launch();
    this.address = `127.0.0.1:${lanPort}`;
  }

  private launch(): void {
    const log = openSync(path.join(this.dir, 'ipmi_sim.log'), 'a');
    // -n: in the background ipmi_sim must not read a terminal (real-nodes F4).
    this.sim = spawn('ipmi_sim', ['-c', 'lan.conf', '-f', 'bmc.emu', '-s', path.join(this.dir, 'state'), '-n'], {
      cwd: this.dir,
      stdio: ['ignore', log, log],
    });
  }

  /** The BMC dies (SIGKILL): its sessions are gone and nothing answers at its address until restart(). */
  async kill(): Promise<void> {
    const sim = this.sim;
    if (!sim || sim.exitCode !== null || sim.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      sim.once('exit', () => resolve());
      sim.kill('SIGKILL');
    });
  }

  /** The BMC comes back at the same address (as after a BMC reset), with no sessions. */
  restart(): void {
    this.launch();
  }

  /** True once a SOL session has the serial line connected. */
  get connected(): boolean {
    return this.peers.size > 0;
  }

  /** What the node's serial port sends (to every connected SOL line). */
  write(text: string): void {
    for (const s of this.peers) s.write(text);
  }

  /** Drop the serial line's connection (the BMC then has no console to relay until SOL is activated again). */
  hangUp(): void {
    for (const s of this.peers) s.destroy();
  }

  log(): string {
    return readFileSync(path.join(this.dir, 'ipmi_sim.log'), 'utf8');
  }

  async stop(): Promise<void> {
    this.hangUp();
    await new Promise<void>((resolve) => (this.line ? this.line.close(() => resolve()) : resolve()));
    const sim = this.sim;
    if (!sim || sim.exitCode !== null || sim.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      sim.once('exit', () => resolve());
      sim.kill('SIGTERM');
    });
  }
}
