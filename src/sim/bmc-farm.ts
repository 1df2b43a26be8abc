/**
 * A farm of BMCs: one listener per node on 127.0.0.1, each on its own port and answering only that
 * node's Redfish system (the simulator's Redfish face, with its BMC faults), so that every node has a
 * BMC of its own as on real hardware (bootorch's per-BMC turns and circuits key on host and port).
 * `unplug` closes a node's listener, so connections to its BMC are refused; `plug` opens it again on
 * the same port. For the BMC tests and the bench; `bootorch sim` serves every node on its one port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimWorld } from './world.ts';
import { handle, type Exchange } from './server.ts';
import { ownBmcPath } from './http/redfish-inventory.ts';

export interface BmcFarm {
  /** The node's ComputerSystem URL (its BMC address for bootorch's inventory). */
  url(id: string): string;
  unplug(id: string): Promise<void>;
  plug(id: string): Promise<void>;
  close(): Promise<void>;
}

interface Bmc {
  server: http.Server;
  port: number;
}

export async function startBmcFarm(world: SimWorld, o: { ids?: string[]; onExchange?: (x: Exchange) => void } = {}): Promise<BmcFarm> {
  const ids = o.ids ?? world.ids();
  const reports = { delivered: 0, refused: 0 };
  const bmcs = new Map<string, Bmc>();
  const serve = (id: string, port: number) =>
    new Promise<Bmc>((resolve, reject) => {
      const server = http.createServer((req, res) => {
        const path = new URL(req.url ?? '/', 'http://bmc').pathname;
        // This BMC manages one system: another node's path is not here.
        if (!ownBmcPath(id, path)) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end(`not this BMC's system: ${path}`);
          return;
        }
        handle(world, reports, req, res, o.onExchange, id).catch(() => res.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
    });
  const stop = (b: Bmc) =>
    new Promise<void>((resolve) => {
      b.server.closeAllConnections();
      b.server.close(() => resolve());
    });
  // In slices: thousands of listens at once would only queue in the event loop.
  for (let i = 0; i < ids.length; i += 100) {
    const slice = ids.slice(i, i + 100);
    const started = await Promise.all(slice.map((id) => serve(id, 0)));
    slice.forEach((id, j) => bmcs.set(id, started[j]!));
  }
  const ports = new Map([...bmcs].map(([id, b]) => [id, b.port]));
  const unplugged = new Set<string>();
  return {
    url: (id) => `http://127.0.0.1:${ports.get(id)}/redfish/v1/Systems/${id}`,
    async unplug(id) {
      if (unplugged.has(id)) return;
      unplugged.add(id);
      await stop(bmcs.get(id)!);
    },
    async plug(id) {
      if (!unplugged.delete(id)) return;
      bmcs.set(id, await serve(id, ports.get(id)!));
    },
    async close() {
      await Promise.all([...bmcs].filter(([id]) => !unplugged.has(id)).map(([, b]) => stop(b)));
    },
  };
}
