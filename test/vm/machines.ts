/**
 * Real virtual machines for the VM test (../shared/reference/real-nodes.md): per node one OpenIPMI
 * `ipmi_sim` on 127.0.0.1 (RMCP+ on UDP, the VM channel on TCP) whose power-on command starts a QEMU
 * VM that network-boots through iPXE over user-mode networking (slirp; the host is 10.0.2.2).
 * Every process started here is tracked by PID (ipmi_sim as spawned, each QEMU by the PID file its
 * start script writes before exec) and killed by PID in stop(), also after a failure.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, openSync, readFileSync, existsSync, writeFileSync, chmodSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface VmNode {
  name: string;
  xname: string;
  mac: string;
  dir: string;
  /** 127.0.0.1:<udp port>, the BMC address bootorch registers. */
  bmcAddress: string;
  console: string;
  /** Epoch ms of each power-on (start.sh writes one line per start). */
  powerOns(): number[];
}

export const BMC_USER = 'admin';
export const BMC_PASSWORD = 'password';

/** A port free for both UDP and TCP at the moment of asking. */
async function freePort(udp: boolean): Promise<number> {
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

export class Machines {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'bootorch-vm-'));
  readonly nodes: VmNode[] = [];
  private readonly sims: ChildProcess[] = [];

  /**
   * `machine: 'qemu'` boots a VM; `'sleep'` makes the "machine" a `sleep` process (power = alive), for
   * tests of the BMC path alone, where nothing answers a soft-off (like firmware).
   */
  constructor(
    private readonly o: { machine?: 'qemu' | 'sleep'; assets?: string; bootfile?: string; accel?: 'tcg' | 'kvm'; memoryMb?: number },
  ) {}

  private get binary(): string {
    return this.o.machine === 'sleep' ? 'sleep' : 'qemu-system';
  }

  /** `disk`: a raw image file the VM gets as a virtio disk; it then boots from the network first, then the disk. */
  async add(name: string, xname: string, index: number, o: { disk?: string } = {}): Promise<VmNode> {
    const dir = path.join(this.root, name);
    mkdirSync(path.join(dir, 'state'), { recursive: true });
    const lanPort = await freePort(true);
    const vmPort = await freePort(false);
    const mac = `52:54:00:00:00:${index.toString(16).padStart(2, '0')}`;
    const consoleLog = path.join(dir, 'console.log');
    writeFileSync(
      path.join(dir, 'start.sh'),
      `#!/bin/sh
echo "$(date +%s%3N)" >> ${dir}/power-ons
echo $$ >> ${dir}/qemu.pids
${this.o.machine === 'sleep' ? 'exec sleep 3600\n' : ''}exec qemu-system-x86_64 -machine pc -accel ${this.o.accel ?? 'tcg'} -m ${this.o.memoryMb ?? 256} -smp 1 -display none -monitor none \\
  -chardev file,id=con0,path=${consoleLog},append=on -serial chardev:con0 ${o.disk ? `-boot order=nc -drive file=${o.disk},if=virtio,format=raw` : '-boot n'} \\
  -netdev user,id=n0,bootfile=${this.o.bootfile} \\
  -device virtio-net-pci,netdev=n0,mac=${mac} \\
  -chardev socket,id=ipmi0,host=127.0.0.1,port=${vmPort},reconnect=10 \\
  -device ipmi-bmc-extern,chardev=ipmi0,id=bmc0 -device isa-ipmi-kcs,bmc=bmc0
`,
    );
    chmodSync(path.join(dir, 'start.sh'), 0o755);
    const guid = `a123456789abcdefa123456789abcd${index.toString(16).padStart(2, '0')}`;
    writeFileSync(
      path.join(dir, 'lan.conf'),
      `name "${name}"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 ${lanPort}
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid ${guid}
  endlan
  serial 15 127.0.0.1 ${vmPort} codec VM
  startcmd "${dir}/start.sh"
  startnow false
  poweroff_wait ${this.o.machine === 'sleep' ? 1 : 20}
  kill_wait ${this.o.machine === 'sleep' ? 1 : 5}
  user 1 true  ""      "test"     user  10 none md2 md5 straight
  user 2 true  "${BMC_USER}" "${BMC_PASSWORD}" admin 10 none md2 md5 straight
`,
    );
    writeFileSync(
      path.join(dir, 'bmc.emu'),
      `mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_enable 0x20
`,
    );
    const log = openSync(path.join(dir, 'ipmi_sim.log'), 'a');
    // -n: ipmi_sim in the background must not read the terminal (real-nodes F4).
    const sim = spawn('ipmi_sim', ['-c', 'lan.conf', '-f', 'bmc.emu', '-s', path.join(dir, 'state'), '-n'], {
      cwd: dir,
      stdio: ['ignore', log, log],
      detached: true,
    });
    this.sims.push(sim);
    const node: VmNode = {
      name,
      xname,
      mac,
      dir,
      bmcAddress: `127.0.0.1:${lanPort}`,
      console: consoleLog,
      powerOns: () =>
        existsSync(path.join(dir, 'power-ons'))
          ? readFileSync(path.join(dir, 'power-ons'), 'utf8').trim().split('\n').filter(Boolean).map(Number)
          : [],
    };
    this.nodes.push(node);
    return node;
  }

  /** ipmitool against a node's BMC, as an operator would type it. */
  ipmitool(node: VmNode, ...command: string[]): string {
    const [host, port] = node.bmcAddress.split(':');
    return execFileSync(
      'ipmitool',
      ['-I', 'lanplus', '-C', '3', '-H', host!, '-p', port!, '-U', BMC_USER, '-P', BMC_PASSWORD, ...command],
      {
        encoding: 'utf8',
        timeout: 15_000,
      },
    );
  }

  /** Waits until every ipmi_sim answers `chassis power status` (it opens its sockets a moment after start). */
  async ready(deadlineMs = 15_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    for (const n of this.nodes) {
      for (;;) {
        try {
          this.ipmitool(n, 'chassis', 'power', 'status');
          break;
        } catch (e) {
          if (Date.now() > until)
            throw new Error(
              `ipmi_sim of ${n.name} does not answer: ${(e as Error).message}\n${readFileSync(path.join(n.dir, 'ipmi_sim.log'), 'utf8')}`,
            );
          await new Promise((r) => setImmediate(r));
        }
      }
    }
  }

  /** Every machine process this harness started and that still runs (PID files; /proc confirms what it is). */
  qemuPids(): number[] {
    return this.nodes
      .flatMap((n) => {
        const f = path.join(n.dir, 'qemu.pids');
        return existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').filter(Boolean).map(Number) : [];
      })
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(this.binary);
        } catch {
          return false;
        }
      });
  }

  /** Power off over IPMI, then kill any QEMU and every ipmi_sim by PID. Never throws. */
  async stop(): Promise<void> {
    for (const n of this.nodes) {
      try {
        this.ipmitool(n, 'chassis', 'power', 'off');
      } catch {
        /* the kill below covers it */
      }
    }
    for (const pid of this.qemuPids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await Promise.all(
      this.sims.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.exitCode !== null || s.signalCode !== null) return resolve();
            s.once('exit', () => resolve());
            try {
              s.kill('SIGTERM');
            } catch {
              resolve();
            }
          }),
      ),
    );
  }
}
