/**
 * Nodes for the BMC fault tests, as real processes: per IPMI node one OpenIPMI `ipmi_sim` on
 * 127.0.0.1 whose "machine" is a `sleep` (power = it runs, real-nodes §6) that, each time the BMC
 * powers it on, plays firmware and image in the background: its boot script by MAC from bootorch,
 * then the shell reporter with that kernel command line (the same path a VM's iPXE and initrd take).
 * `firmware()` plays the same for a node whose BMC is the simulator's Redfish face.
 * Every process is tracked by PID (ipmi_sim as spawned, each machine by the PID file its start
 * script writes before exec) and killed by PID, one at a time, also after a failure.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../helpers/processes.ts';

export const BMC_USER = 'admin';
export const BMC_PASSWORD = 'password';

export interface IpmiNode {
  xname: string;
  mac: string;
  dir: string;
  /** 127.0.0.1:<udp port>, the BMC address bootorch registers. */
  bmcAddress: string;
  sim: ChildProcess;
}

/** A UDP port free at the moment of asking (ipmi_sim's LAN channel). */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export class BmcNodes {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'bootorch-bmc-'));
  readonly ipmi: IpmiNode[] = [];
  private readonly firmwareScript = path.join(this.root, 'firmware.sh');

  /** `base`: bootorch's URL as nodes reach it (http://127.0.0.1:PORT). */
  constructor(base: string) {
    // What firmware and the image do: the boot script by MAC, then the reporter with its command line.
    writeFileSync(
      this.firmwareScript,
      `#!/bin/sh
# firmware.sh MAC DIR
script=$(curl -sS -m 10 "${base}/boot/v1/bootscript?mac=$1") || exit 1
cmdline=$(printf '%s\\n' "$script" | sed -n 's/^kernel [^ ]* \\(.*\\) || goto kernel_failed$/\\1/p')
[ -n "$cmdline" ] || { echo "no network boot scheduled for $1"; exit 0; }
printf '%s' "$cmdline" > "$2/cmdline"
BOOTORCH_CMDLINE="$2/cmdline" BOOTORCH_REPORT_ATTEMPTS=5 exec sh ${path.join(ROOT, 'src/api/boot/reporter.sh')}
`,
      { mode: 0o755 },
    );
  }

  /** Plays firmware for a node once (a Redfish node the simulator powered on); its output. */
  firmware(mac: string, name: string): Promise<string> {
    const dir = path.join(this.root, name);
    mkdirSync(dir, { recursive: true });
    return new Promise((resolve) =>
      execFile('sh', [this.firmwareScript, mac, dir], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve(`${stdout}${stderr}${err ? ` (${err.message})` : ''}`),
      ),
    );
  }

  /** An IPMI node: its ipmi_sim, answering once ready() has seen it answer. */
  async add(xname: string, index: number): Promise<IpmiNode> {
    const dir = path.join(this.root, xname);
    mkdirSync(path.join(dir, 'state'), { recursive: true });
    const lanPort = await freeUdpPort();
    // ipmi_sim refuses power control without a VM channel; nothing connects to it (no soft-off reaches the machine).
    const vmPort = await freeTcpPort();
    const mac = `52:54:00:00:0b:${index.toString(16).padStart(2, '0')}`;
    writeFileSync(
      path.join(dir, 'start.sh'),
      `#!/bin/sh
echo $$ >> ${dir}/machine.pids
sh ${this.firmwareScript} ${mac} ${dir} >> ${dir}/firmware.log 2>&1 &
exec sleep 3600
`,
    );
    chmodSync(path.join(dir, 'start.sh'), 0o755);
    writeFileSync(
      path.join(dir, 'lan.conf'),
      `name "${xname}"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 ${lanPort}
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcd${index.toString(16).padStart(2, '0')}
  endlan
  serial 15 127.0.0.1 ${vmPort} codec VM
  startcmd "${dir}/start.sh"
  startnow false
  poweroff_wait 1
  kill_wait 1
  user 2 true  "${BMC_USER}" "${BMC_PASSWORD}" admin 10 none md2 md5 straight
`,
    );
    writeFileSync(
      path.join(dir, 'bmc.emu'),
      'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nsel_enable 0x20 1000 0x0a\nmc_enable 0x20\n',
    );
    const log = openSync(path.join(dir, 'ipmi_sim.log'), 'a');
    // -n: ipmi_sim in the background must not read the terminal (real-nodes F4).
    const sim = spawn('ipmi_sim', ['-c', 'lan.conf', '-f', 'bmc.emu', '-s', path.join(dir, 'state'), '-n'], {
      cwd: dir,
      stdio: ['ignore', log, log],
      detached: true,
    });
    const node = { xname, mac, dir, bmcAddress: `127.0.0.1:${lanPort}`, sim };
    this.ipmi.push(node);
    return node;
  }

  /** ipmitool against a node's BMC, as an operator would type it. */
  ipmitool(node: IpmiNode, ...command: string[]): Promise<string> {
    const [host, port] = node.bmcAddress.split(':');
    return new Promise((resolve, reject) =>
      execFile(
        'ipmitool',
        ['-I', 'lanplus', '-C', '3', '-N', '1', '-R', '1', '-H', host!, '-p', port!, '-U', BMC_USER, '-P', BMC_PASSWORD, ...command],
        { timeout: 10_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout)),
      ),
    );
  }

  /** Waits until every live ipmi_sim answers `chassis power status` (it opens its socket a moment after start). */
  async ready(deadlineMs = 15_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    for (const n of this.ipmi.filter((x) => x.sim.exitCode === null && x.sim.signalCode === null)) {
      for (;;) {
        try {
          await this.ipmitool(n, 'chassis', 'power', 'status');
          break;
        } catch (e) {
          if (Date.now() > until) throw new Error(`ipmi_sim of ${n.xname} does not answer: ${(e as Error).message}`);
        }
      }
    }
  }

  /** The BMC dies (SIGKILL to its ipmi_sim); the machine behind it runs on, as a node does when its BMC hangs. */
  killBmc(node: IpmiNode): Promise<void> {
    return new Promise((resolve) => {
      if (node.sim.exitCode !== null || node.sim.signalCode !== null) return resolve();
      node.sim.once('exit', () => resolve());
      node.sim.kill('SIGKILL');
    });
  }

  /** Every machine process started here that still runs (PID files; /proc confirms it is ours). */
  private machinePids(): number[] {
    return this.ipmi.flatMap((n) => {
      const f = path.join(n.dir, 'machine.pids');
      if (!existsSync(f)) return [];
      return readFileSync(f, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sleep');
          } catch {
            return false;
          }
        });
    });
  }

  /** Kill every machine and every ipmi_sim by PID. Never throws. */
  async stop(): Promise<void> {
    for (const pid of this.machinePids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await Promise.all(this.ipmi.map((n) => this.killBmc(n)));
  }
}
