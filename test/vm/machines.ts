/**
 * Real virtual machines for the VM test (../shared/reference/real-nodes.md): per node one OpenIPMI
 * `ipmi_sim` on 127.0.0.1 (RMCP+ on UDP, the VM channel on TCP) whose chassis is this harness's
 * `chassis.sh` (lan.conf `chassis_control`): power on starts a QEMU VM, off kills it, soft-off and
 * reset go to QEMU's monitor (an ACPI power-button press, a reset), and the boot device an IPMI client
 * sets (`chassis bootdev pxe|disk`, boot parameter 5) is what the next power-on boots: `pxe`
 * network-boots through iPXE over user-mode networking (slirp; the host is 10.0.2.2), `disk` boots the
 * virtio disk with no network ROM at all (nothing can fall back to the network), and without a boot
 * device set the machine stays in firmware and boots nothing. Like a real BMC, the setting holds for
 * one boot. ipmi_sim keeps no boot options of its own (without a chassis program it refuses them, and
 * ipmitool still exits 0), so a boot device bootorch did not set, or set wrongly, fails the test.
 * Each node's serial port is a UART this harness holds (a TCP relay): QEMU connects its serial port
 * to it and ipmi_sim its SOL line (lan.conf `sol "tcp:..."`, when a SOL session is activated), so
 * what the guest prints reaches an IPMI Serial-over-LAN client as on real hardware, and is also
 * appended to the node's console.log, whatever SOL does.
 * Every process started here is tracked by PID (ipmi_sim as spawned, each QEMU by the PID file its
 * start script writes before exec) and killed by PID in stop(), also after a failure.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { appendFileSync, mkdirSync, openSync, readFileSync, existsSync, writeFileSync, chmodSync, mkdtempSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fruImage } from '../helpers/ipmi-sim.ts';

export interface VmNode {
  name: string;
  xname: string;
  mac: string;
  dir: string;
  /** 127.0.0.1:<udp port>, the BMC address bootorch registers. */
  bmcAddress: string;
  /** Everything the guest's serial port sent (the UART relay appends it). */
  console: string;
  /** True while ipmi_sim has the serial line connected (an active SOL session). */
  solConnected(): boolean;
  /** Epoch ms of each power-on (start.sh writes one line per start). */
  powerOns(): number[];
  /** The boot device of each power-on, in order: `pxe`, `disk`, or `none` when none was set. */
  boots(): string[];
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

const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

export class Machines {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'bootorch-vm-'));
  readonly nodes: VmNode[] = [];
  private readonly sims: ChildProcess[] = [];
  private readonly uarts: Server[] = [];
  private readonly uartSockets = new Set<Socket>();

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

  /** `disk`: a raw image file the VM gets as a virtio disk (booted when the BMC is told `bootdev disk`). */
  async add(name: string, xname: string, index: number, o: { disk?: string } = {}): Promise<VmNode> {
    const dir = path.join(this.root, name);
    mkdirSync(path.join(dir, 'state'), { recursive: true });
    const lanPort = await freePort(true);
    const vmPort = await freePort(false);
    const mac = `52:54:00:00:00:${index.toString(16).padStart(2, '0')}`;
    const consoleLog = path.join(dir, 'console.log');
    const uart = await this.uart(consoleLog);
    // QEMU's monitor on a pair of FIFOs in the node's folder (monitor.in, monitor.out): chassis.sh
    // writes a line to it with bash alone, and no port is held between the harness and QEMU.
    const monitor = path.join(dir, 'monitor');
    // $1: the boot device. pxe: iPXE from the NIC's ROM; disk: no NIC ROM (romfile=), the disk only;
    // none: QEMU starts with its CPU stopped (-S), a machine on whose firmware finds nothing to boot.
    writeFileSync(
      path.join(dir, 'start.sh'),
      `#!/bin/sh
echo $$ >> ${dir}/qemu.pids
${this.o.machine === 'sleep' ? 'exec sleep 3600\n' : ''}case "$1" in
  pxe) boot="-boot order=n"; rom="" ;;
  disk) boot="-boot order=c"; rom=",romfile=" ;;
  *) boot="-S"; rom=",romfile=" ;;
esac
rm -f ${monitor}.in ${monitor}.out && mkfifo ${monitor}.in ${monitor}.out
exec qemu-system-x86_64 -machine pc -accel ${this.o.accel ?? 'tcg'} -m ${this.o.memoryMb ?? 256} -smp 1 -display none \\
  -chardev pipe,id=mon0,path=${monitor} -mon chardev=mon0,mode=readline \\
  -chardev socket,id=con0,host=127.0.0.1,port=${uart.qemuPort} -serial chardev:con0 $boot ${o.disk ? `-drive file=${o.disk},if=virtio,format=raw` : ''} \\
  -netdev user,id=n0,bootfile=${this.o.bootfile} \\
  -device virtio-net-pci,netdev=n0,mac=${mac}$rom \\
  -chardev socket,id=ipmi0,host=127.0.0.1,port=${vmPort},reconnect=10 \\
  -device ipmi-bmc-extern,chardev=ipmi0,id=bmc0 -device isa-ipmi-kcs,bmc=bmc0
`,
    );
    chmodSync(path.join(dir, 'start.sh'), 0o755);
    // ipmi_sim runs it as `chassis.sh get power boot` (prints power:1, boot:pxe) or `chassis.sh set power 1`,
    // `set boot default` (its name for "disk"), `set shutdown 1`, `set reset 1`. ipmi_sim answers
    // nothing else until it returns, so it works with bash builtins and returns at once: QEMU starts in
    // its own session (output in machine.log); soft-off and reset are one line to QEMU's monitor.
    writeFileSync(
      path.join(dir, 'chassis.sh'),
      `#!/bin/bash
D=${dir}
pid() { read -r p < $D/qemu.pid && [ -n "$p" ] && read -r stat < /proc/$p/stat && st=\${stat##*) } && [[ \${st:0:1} != [ZX] ]]; } 2>/dev/null
# A line to QEMU's monitor, written in the background: QEMU holds the FIFO open, but one that just
# died would leave the write waiting for a reader.
monitor() {
  [ -p ${monitor}.in ] || return 1
  { timeout 5 bash -c 'echo "$1" > "$2"' _ "$1" ${monitor}.in; } </dev/null >/dev/null 2>&1 &
}
bootdev() { local d=none; read -r d < $D/bootdev 2>/dev/null; echo "\${d:-none}"; }
op=$1; shift
if [ "$op" = get ]; then
  for parm in "$@"; do
    case $parm in
      power) if pid; then echo power:1; else echo power:0; fi ;;
      boot) echo "boot:$(bootdev)" ;;
      *) echo "no such parameter: $parm"; exit 1 ;;
    esac
  done
  exit 0
fi
[ "$op" = set ] || { echo "unknown operation: $op"; exit 1; }
while [ $# -gt 0 ]; do
  parm=$1; val=$2; shift 2
  case $parm in
    power)
      if [ "$val" = 1 ]; then
        pid && continue
        dev=$(bootdev)
        echo none > $D/bootdev
        case $dev in pxe) ;; default) dev=disk ;; *) dev=none ;; esac
        # Recorded before the answer, not by start.sh in the background: a status read that
        # follows the power-on finds the record (once it was missing at load in CI).
        now=\${EPOCHREALTIME/./}; echo $((now / 1000)) >> $D/power-ons
        echo "$dev" >> $D/boots
        setsid $D/start.sh $dev </dev/null >>$D/machine.log 2>&1 &
        echo $! > $D/qemu.pid
      elif pid; then
        kill -KILL $p
      fi ;;
    boot) echo "$val" > $D/bootdev ;;
    shutdown) pid && { monitor system_powerdown || { echo "no VM to tell"; exit 1; }; } ;;
    reset) pid && { monitor system_reset || { echo "no VM to tell"; exit 1; }; } ;;
    identify) shift ;;
    *) echo "no such parameter: $parm"; exit 1 ;;
  esac
done
`,
    );
    chmodSync(path.join(dir, 'chassis.sh'), 0o755);
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
  sol "tcp:127.0.0.1:${uart.solPort}" 115200
  chassis_control "${dir}/chassis.sh"
  user 1 true  ""      "test"     user  10 none md2 md5 straight
  user 2 true  "${BMC_USER}" "${BMC_PASSWORD}" admin 10 none md2 md5 straight
`,
    );
    // The BMC's FRU names the machine and, in a Product Extra field, its NIC's MAC (what discovery reads).
    const fru = fruImage({ manufacturer: 'QEMU', name: 'Standard PC (i440FX + PIIX)', serial: `VM${index}`, extra: [`mac=${mac}`] });
    writeFileSync(path.join(dir, 'fru.bin'), fru);
    writeFileSync(
      path.join(dir, 'bmc.emu'),
      `mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 1000 0x0a
mc_add_fru_data 0x20 0 ${fru.length} file 0 "fru.bin"
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
      solConnected: uart.solConnected,
      powerOns: () => lines(path.join(dir, 'power-ons')).map(Number),
      boots: () => lines(path.join(dir, 'boots')),
    };
    this.nodes.push(node);
    return node;
  }

  /**
   * A node's UART: QEMU's serial port connects to `qemuPort` at the machine's start (so the line is
   * there before the guest prints), ipmi_sim's SOL line to `solPort` while a session is active. Bytes
   * from the guest go to console.log and every SOL line; bytes typed over SOL go to the guest.
   */
  private async uart(consoleLog: string): Promise<{ qemuPort: number; solPort: number; solConnected: () => boolean }> {
    writeFileSync(consoleLog, '');
    const guests = new Set<Socket>();
    const sols = new Set<Socket>();
    const listen = async (onSocket: (s: Socket) => void): Promise<number> => {
      const server = createServer((s) => {
        this.uartSockets.add(s);
        s.on('close', () => this.uartSockets.delete(s));
        s.on('error', () => s.destroy());
        onSocket(s);
      });
      this.uarts.push(server);
      return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
    };
    const qemuPort = await listen((s) => {
      guests.add(s);
      s.on('close', () => guests.delete(s));
      s.on('data', (b) => {
        appendFileSync(consoleLog, b);
        for (const l of sols) l.write(b);
      });
    });
    const solPort = await listen((s) => {
      sols.add(s);
      s.on('close', () => sols.delete(s));
      s.on('data', (b) => {
        for (const g of guests) g.write(b);
      });
    });
    return { qemuPort, solPort, solConnected: () => sols.size > 0 };
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

  /** Power off over IPMI, then kill any QEMU and every ipmi_sim by PID, and close the UARTs. Never throws. */
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
    for (const u of this.uarts) u.close();
    for (const s of this.uartSockets) s.destroy();
  }
}
