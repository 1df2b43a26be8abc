/**
 * The simulated nodes' serial consoles as a BMC's SSH console serves them (Redfish SerialConsole.SSH):
 * one ssh2 Server per BMC on its own port, all with the farm's one host key (generated per farm run),
 * accepting only the login the farm's Redfish accepts (simLoginAccepted) by password. A shell (pty or
 * not) is the node's console: what the node prints from then on, nothing from before (a BMC keeps no
 * history). The world's events print a boot: its kernel and dracut lines at power-on, a login prompt
 * when it booted, or a kernel panic when it booted but never reports (fault bootsButNeverReports). The
 * lines are one shared template with the node's name put in as they are sent.
 */
import type net from 'node:net';
import { createRequire } from 'node:module';
import type * as Ssh2 from 'ssh2';

/**
 * ssh2 is loaded from node_modules, not bundled into dist/ (scripts/build.mjs): it looks for optional
 * native code of its own (cpu-features, its crypto binding) that a bundle cannot hold. Loaded by the
 * first farm with consoles, not at start-up (about 30 ms).
 */
let ssh2: typeof Ssh2 | undefined;
const lib = () => (ssh2 ??= createRequire(import.meta.url)('ssh2') as typeof Ssh2);
import type { SimWorld } from './world.ts';
import { simLoginAccepted } from './http/redfish-inventory.ts';

const POWER_ON = [
  '[    0.000000] Linux version 6.1.0-sim (bootorch@sim) (gcc 12.2.0) #1 SMP PREEMPT_DYNAMIC',
  '[    0.000000] Command line: BOOT_IMAGE=kernel console=ttyS0,115200n8 ip=dhcp',
  '[    1.204311] dracut: dracut-059',
  '[    2.118034] dracut-initqueue[312]: fetching rootfs over http',
  '[    4.502117] dracut: Mounted root filesystem',
]
  .map((l) => `${l}\r\n`)
  .join('');
const LOGIN = '\r\n{id} login: ';
const PANIC = '[    5.914201] Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\r\n';

/** A host key for one farm run (ed25519, OpenSSH private key text). */
export function simHostKey(): string {
  return lib().utils.generateKeyPairSync('ed25519').private;
}

export class SimConsoles {
  private readonly shells = new Map<string, Set<Ssh2.ServerChannel>>();
  private readonly off: Array<() => void> = [];

  constructor(private readonly world: SimWorld) {
    this.off.push(
      world.on('power', (p) => {
        if (p.state === 'on') this.write(p.id, POWER_ON);
      }),
      world.on('boot', (p) => {
        this.write(p.id, world.faults.has('bootsButNeverReports', p.id) ? PANIC : LOGIN.replace('{id}', p.id));
      }),
    );
  }

  /** Print on the node's open consoles (nothing when none is open). */
  write(id: string, text: string): void {
    for (const ch of this.shells.get(id) ?? []) ch.write(text);
  }

  /** Consoles open now for the node. */
  open(id: string): number {
    return this.shells.get(id)?.size ?? 0;
  }

  /** A BMC's SSH server for node `id` on 127.0.0.1 (`port` 0: any). */
  listen(id: string, port: number, hostKey: string): Promise<{ server: Ssh2.Server; port: number; close(): Promise<void> }> {
    const conns = new Set<Ssh2.Connection>();
    const server = new (lib().Server)({ hostKeys: [hostKey] }, (conn) => {
      conns.add(conn);
      conn.on('close', () => conns.delete(conn));
      conn.on('error', () => {});
      conn.on('authentication', (ctx) => {
        if (ctx.method === 'password' && simLoginAccepted(this.world, ctx.username, ctx.password)) ctx.accept();
        else ctx.reject(['password']);
      });
      conn.on('ready', () => {
        conn.on('session', (accept) => {
          const session = accept();
          session.on('pty', (ok) => ok?.());
          session.on('shell', (ok) => {
            const ch = ok();
            if (!this.shells.has(id)) this.shells.set(id, new Set());
            this.shells.get(id)!.add(ch);
            // The console entry command (or anything typed) is read and dropped.
            ch.on('data', () => {});
            ch.on('close', () => this.shells.get(id)?.delete(ch));
          });
        });
      });
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const bound = (server.address() as net.AddressInfo).port;
        resolve({
          server,
          port: bound,
          close: () =>
            new Promise<void>((done) => {
              for (const c of conns) c.end();
              for (const ch of this.shells.get(id) ?? []) ch.destroy();
              server.close(() => done());
            }),
        });
      });
    });
  }

  close(): void {
    for (const f of this.off) f();
  }
}
