/**
 * A farm of BMCs: one listener per node on 127.0.0.1, each on its own port and answering only that
 * node's Redfish system (the simulator's Redfish face, with its BMC faults), so that every node has a
 * BMC of its own as on real hardware (bootorch's per-BMC turns and circuits key on host and port).
 * With `ssh`, each BMC also serves its node's serial console over SSH on a port of its own
 * (sim/ssh-console.ts, one host key per farm run), and its system's SerialConsole offers it.
 * `redfish: 'shared'` serves every system on one listener instead (a farm of thousands of SSH consoles
 * then needs one descriptor per node less). `unplug` closes a node's listeners, so connections to its
 * BMC are refused; `plug` opens them again on the same ports. For the BMC and console tests and the
 * benches; `bootorch sim` serves every node on its one port, without consoles.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimWorld } from './world.ts';
import { handle, type Exchange } from './server.ts';
import { ownBmcPath } from './http/redfish-inventory.ts';
import { setSimSerialConsole } from './http/redfish.ts';
import { SimConsoles, simHostKey } from './ssh-console.ts';

export interface BmcFarm {
  /** The node's ComputerSystem URL (its BMC address for bootorch's inventory). */
  url(id: string): string;
  /** The node's SSH console port (with `ssh`). */
  sshPort(id: string): number;
  /** The simulated consoles (with `ssh`): write to a node's, count the open ones. */
  readonly consoles?: SimConsoles;
  /** The node's BMC gets a new SSH host key (a replaced or reset BMC; with `ssh`). */
  rekey(id: string): Promise<void>;
  unplug(id: string): Promise<void>;
  plug(id: string): Promise<void>;
  close(): Promise<void>;
}

interface Listener {
  port: number;
  close(): Promise<void>;
}

export interface BmcFarmOptions {
  ids?: string[];
  onExchange?: (x: Exchange) => void;
  ssh?: boolean;
  /** 'per-node' (default): a listener per BMC; 'shared': one for every system. */
  redfish?: 'per-node' | 'shared';
}

export async function startBmcFarm(world: SimWorld, o: BmcFarmOptions = {}): Promise<BmcFarm> {
  const ids = o.ids ?? world.ids();
  const reports = { delivered: 0, refused: 0 };
  const serveHttp = (id: string | undefined, port: number) =>
    new Promise<Listener>((resolve, reject) => {
      const server = http.createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://bmc').pathname;
        // This BMC manages one system: another node's path is not here.
        if (id && !ownBmcPath(id, path)) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end(`not this BMC's system: ${path}`);
          return;
        }
        handle(world, reports, req, res, o.onExchange, id).catch(() => res.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () =>
        resolve({
          port: (server.address() as AddressInfo).port,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections();
              server.close(() => done());
            }),
        }),
      );
    });
  const consoles = o.ssh ? new SimConsoles(world) : undefined;
  const hostKeys = new Map<string, string>();
  const farmKey = o.ssh ? simHostKey() : '';
  const shared = o.redfish === 'shared' ? await serveHttp(undefined, 0) : undefined;
  const http_ = new Map<string, Listener>();
  const ssh = new Map<string, Listener>();
  const open = async (id: string, httpPort: number, sshPort: number) => {
    if (!shared) http_.set(id, await serveHttp(id, httpPort));
    if (consoles) ssh.set(id, await consoles.listen(id, sshPort, hostKeys.get(id) ?? farmKey));
  };
  // In slices: thousands of listens at once would only queue in the event loop.
  for (let i = 0; i < ids.length; i += 100) await Promise.all(ids.slice(i, i + 100).map((id) => open(id, 0, 0)));
  const httpPorts = new Map([...http_].map(([id, l]) => [id, l.port]));
  const sshPorts = new Map([...ssh].map(([id, l]) => [id, l.port]));
  for (const [id, port] of sshPorts)
    setSimSerialConsole(world, id, {
      MaxConcurrentSessions: 1,
      SSH: { ServiceEnabled: true, Port: port, SharedWithManagerCLI: false, HotKeySequenceDisplay: 'Press ~. to exit console' },
      IPMI: { ServiceEnabled: false },
    });
  const unplugged = new Set<string>();
  const shut = async (id: string) => {
    await Promise.all([http_.get(id)?.close(), ssh.get(id)?.close()]);
  };
  return {
    url: (id) => `http://127.0.0.1:${shared?.port ?? httpPorts.get(id)}/redfish/v1/Systems/${id}`,
    sshPort: (id) => sshPorts.get(id) ?? 0,
    consoles,
    async rekey(id) {
      hostKeys.set(id, simHostKey());
      if (unplugged.has(id) || !consoles) return;
      await ssh.get(id)?.close();
      ssh.set(id, await consoles.listen(id, sshPorts.get(id)!, hostKeys.get(id)!));
    },
    async unplug(id) {
      if (unplugged.has(id)) return;
      unplugged.add(id);
      await shut(id);
    },
    async plug(id) {
      if (!unplugged.delete(id)) return;
      await open(id, httpPorts.get(id) ?? 0, sshPorts.get(id) ?? 0);
    },
    async close() {
      await Promise.all(ids.filter((id) => !unplugged.has(id)).map(shut));
      await shared?.close();
      consoles?.close();
    },
  };
}
