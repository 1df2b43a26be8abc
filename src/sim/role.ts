/**
 * The `sim` role for the composition root (src/main.ts): a world sized from the config, served over
 * HTTP, its nodes reporting to bootorch at BOOTORCH_URL when given. Returns the URLs to hand to
 * `BOOTORCH_ADAPTERS=http` (HSM_URL, PCS_URL, BSS_URL, CFS_URL, S3_URL).
 */
import { startBmcFarm } from './bmc-farm.ts';
import { startSimServer, type SimServer } from './server.ts';
import { SimPxe, standaloneNodes, startBmcHost, type StandaloneNodeEntry } from './standalone.ts';
import { SimWorld, type WorldOptions } from './world.ts';

export interface SimRoleOptions {
  nodes: number;
  seed: number;
  port: number;
  host: string;
  /** bootorch GraphQL URL the nodes report to; without it reports only show up as world events. */
  bootorchUrl?: string;
  /** Bearer token per node (or one for all, e.g. an operator token in development). */
  reportToken?: string | ((xname: string) => string | undefined);
  /** The reporters' sockets per bootorch URL (default 128; sim/server.ts). */
  reportConnections?: number;
  /** Anything else for the world (timings, faults, river cabinet, ...). */
  world?: WorldOptions;
  /**
   * A site without CSM (sim/standalone.ts): each node's BMC at an address of its own, nodes booting
   * from bootorch's /boot/v1 at `bootUrl` and reporting with the credential their ticket bought.
   */
  standalone?: {
    bootUrl: string;
    /** `loopback` (one listener, an address per BMC; default) or `ports` (a listener per BMC). */
    bmcAddresses?: 'loopback' | 'ports';
    bmcPort?: number;
    /** Boot-network requests in flight at once (default 1024). */
    pxeConnections?: number;
  };
}

export interface SimRole {
  world: SimWorld;
  server: SimServer;
  /** Standalone mode: the nodes as `bootorch node apply -f` registers them, and their boot side. */
  standalone?: { nodes: StandaloneNodeEntry[]; pxe: SimPxe; bmcs: string };
  close(): Promise<void>;
}

/** Realistic-but-quick timings for a hand-driven simulator (seconds, not the unit tests' milliseconds). */
export const INTERACTIVE_TIMING: WorldOptions = {
  powerOnDelayMs: 2000,
  powerOffDelayMs: 3000,
  forceOffDelayMs: 1000,
  bootDelayMs: 5000,
  reportRetryBaseMs: 2000,
  reportRetryMaxMs: 30_000,
  batcher: { batchSize: 25, batchWindowMs: 2000, checkIntervalMs: 1000, runTimeMs: 5000 },
};

/**
 * Hardware in tenths of a second: for tests and benchmarks driving `bootorch sim` over HTTP, where the
 * engine's waits (FAST_OPTIONS) are a second or two. Reporters back off from 200 ms to 2 s.
 */
export const FAST_TIMING: WorldOptions = {
  powerOnDelayMs: 100,
  powerOffDelayMs: 100,
  forceOffDelayMs: 50,
  bootDelayMs: 200,
  reportRetryBaseMs: 200,
  reportRetryMaxMs: 2000,
  batcher: { batchSize: 25, batchWindowMs: 100, checkIntervalMs: 50, runTimeMs: 200 },
};

/**
 * Hardware and configuration that answer at once: the engine's own cost, for benchmarks (the same
 * timings as the in-process bench, so the real path and the in-process figure compare like for like).
 */
export const INSTANT_TIMING: WorldOptions = {
  powerOnDelayMs: 0,
  powerOffDelayMs: 0,
  forceOffDelayMs: 0,
  bootDelayMs: 0,
  reportRetryBaseMs: 5,
  reportRetryMaxMs: 50,
  batcher: { batchSize: 1000, batchWindowMs: 0, checkIntervalMs: 5, runTimeMs: 0 },
};

export async function startSimRole(o: SimRoleOptions): Promise<SimRole> {
  const world = new SimWorld({ river: true, ...INTERACTIVE_TIMING, ...o.world, nodes: o.nodes, seed: o.seed });
  const sa = o.standalone;
  const pxe = sa ? new SimPxe(world, { bootUrl: sa.bootUrl, connections: sa.pxeConnections }) : undefined;
  // Standalone nodes report to bootorch with the credential their boot ticket bought.
  const reportUrl = o.bootorchUrl ?? (sa ? `${sa.bootUrl.replace(/\/+$/, '')}/graphql` : undefined);
  const server = await startSimServer(world, {
    port: o.port,
    host: o.host,
    report: reportUrl
      ? { url: reportUrl, authToken: pxe ? (x) => pxe.credentials.get(x) : o.reportToken, connections: o.reportConnections }
      : undefined,
  });
  let standalone: SimRole['standalone'];
  const closers: Array<() => Promise<void>> = [];
  if (sa && pxe) {
    const bmcs =
      sa.bmcAddresses === 'ports'
        ? await startBmcFarm(world)
        : await startBmcHost(world, { delivered: 0, refused: 0 }, { port: sa.bmcPort });
    closers.push(() => bmcs.close());
    pxe.install();
    const how =
      'port' in bmcs
        ? `one listener on port ${bmcs.port}, each BMC at its own loopback address (127.64.0.1 ...)`
        : 'a listener per BMC on 127.0.0.1';
    standalone = { nodes: standaloneNodes(world, (id) => bmcs.url(id)), pxe, bmcs: how };
  }
  return {
    world,
    server,
    standalone,
    close: async () => {
      pxe?.close();
      for (const c of closers) await c();
      await server.close();
      world.close();
    },
  };
}
