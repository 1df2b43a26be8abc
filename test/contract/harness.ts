/**
 * A contract-test rig: a SimWorld served by the simulator on a free port, the real HTTP adapters
 * pointed at it, and every exchange recorded. `violations()` checks them all against the contracts;
 * exchanges a test makes by hand (raw fetch with the RAW header) have only their response checked.
 */
import { createHttpAdapters } from '../../src/adapters/http-factory.ts';
import type { Adapters } from '../../src/adapters/ports.ts';
import { startSimServer, type Exchange, type SimServer } from '../../src/sim/server.ts';
import { SimWorld, type WorldOptions } from '../../src/sim/world.ts';
import { contract, type ContractService, type Violation } from './contracts.ts';

export const RAW = { 'x-contract-test': 'raw' };

export interface Rig {
  world: SimWorld;
  server: SimServer;
  adapters: Adapters & { close(): Promise<void> };
  exchanges: Exchange[];
  /** fetch a simulator path by hand (marked RAW). */
  raw(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  violations(): Promise<Violation[]>;
  close(): Promise<void>;
}

export async function startRig(o: WorldOptions = {}, retry = { retries: 2, baseMs: 1, maxMs: 5 }): Promise<Rig> {
  const world = new SimWorld({ nodes: 16, ...o });
  const exchanges: Exchange[] = [];
  const server = await startSimServer(world, { onExchange: (x) => exchanges.push(x) });
  const u = server.urls;
  const adapters = createHttpAdapters({
    hsm: { url: u.hsm },
    pcs: { url: u.pcs },
    bss: { url: u.bss },
    cfs: { url: u.cfs },
    ims: { url: u.s3 },
    retry,
  });
  return {
    world,
    server,
    adapters,
    exchanges,
    raw: (p, init = {}) =>
      fetch(`${server.url}${p}`, {
        method: init.method ?? 'GET',
        headers: { ...RAW, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
        body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
      }),
    violations: async () => {
      const out: Violation[] = [];
      for (const x of exchanges) {
        if (x.service === 'ims' || x.service === 'none') continue;
        const c = await contract(x.service as ContractService);
        out.push(...c.check(x, { request: x.requestHeaders['x-contract-test'] !== 'raw' }));
      }
      return out;
    },
    close: async () => {
      await adapters.close();
      await server.close();
      world.close();
    },
  };
}
