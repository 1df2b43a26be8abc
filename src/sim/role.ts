/**
 * The `sim` role for the composition root (src/main.ts): a world sized from the config, served over
 * HTTP, its nodes reporting to bootorch at BOOTORCH_URL when given. Returns the URLs to hand to
 * `BOOTORCH_ADAPTERS=http` (HSM_URL, PCS_URL, BSS_URL, CFS_URL, S3_URL).
 */
import { startSimServer, type SimServer } from './server.ts';
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

export async function startSimRole(o: SimRoleOptions): Promise<{ world: SimWorld; server: SimServer; close(): Promise<void> }> {
  const world = new SimWorld({ river: true, ...INTERACTIVE_TIMING, ...o.world, nodes: o.nodes, seed: o.seed });
  const server = await startSimServer(world, {
    port: o.port,
    host: o.host,
    report: o.bootorchUrl ? { url: o.bootorchUrl, authToken: o.reportToken, connections: o.reportConnections } : undefined,
  });
  return {
    world,
    server,
    close: async () => {
      await server.close();
      world.close();
    },
  };
}
