/**
 * The Redfish client's connections to BMCs, over real HTTP: a BMC's connection outlives the seconds
 * between a reboot's phases (against the simulator's BMC host, and against a BMC that says nothing of
 * keep-alive), and a BMC that closes idle connections sooner costs a new connection, never a lost or
 * doubled call. Time between the phases passes on vitest's fake clock, which drives undici's timers
 * only: nothing waits for seconds, and the BMCs' own idle timers (real time) do not fire.
 */
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimWorld } from '../../src/sim/world.ts';
import { BMC_KEEP_ALIVE_MS, startBmcHost, type BmcHost } from '../../src/sim/standalone.ts';
import { REDFISH_KEEP_ALIVE_MS, RedfishClient } from '../../src/adapters/standalone/redfish.ts';
import { keptConnectionsDefault } from '../../src/adapters/standalone/connections.ts';
import { underFileLimit } from '../helpers/file-limit.ts';

let world: SimWorld;
let host: BmcHost;
const clients: RedfishClient[] = [];
const client = (o: ConstructorParameters<typeof RedfishClient>[0] = {}) => {
  const c = new RedfishClient({ timeoutMs: 2000, ...o });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  world = new SimWorld({ nodes: 2, initial: { power: 'on' } });
  host = await startBmcHost(world, { delivered: 0, refused: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await host?.close();
  world?.close();
});

const target = (address: string, id = 'x') => ({ id, address, username: 'root', password: 'calvin' });

/** A scripted BMC: one ComputerSystem at /redfish/v1/Systems/x, counting connections and requests. */
async function scriptedBmc(o: { closeIdleAfterMs?: number } = {}) {
  const idle = new WeakMap<object, NodeJS.Timeout>();
  const seen = { connections: 0, requests: [] as string[], dropNext: undefined as string | undefined };
  const server = http.createServer((req, res) => {
    seen.requests.push(req.method!);
    // The race a kept connection can meet: the BMC closes it as our request arrives, and answers nothing.
    if (seen.dropNext === req.method) {
      seen.dropNext = undefined;
      req.socket.destroy();
      return;
    }
    clearTimeout(idle.get(req.socket));
    req.resume();
    req.on('end', () => {
      const system = {
        PowerState: 'On',
        Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/x/Actions/ComputerSystem.Reset' } },
      };
      if (req.method === 'GET') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(system));
      else res.writeHead(204).end();
      // A BMC that closes idle connections soon, without a Keep-Alive header to say so.
      const after = o.closeIdleAfterMs;
      if (after !== undefined)
        res.on('finish', () =>
          idle.set(
            req.socket,
            setTimeout(() => req.socket.destroy(), after),
          ),
        );
    });
  });
  // No `Keep-Alive: timeout` announced, and no idle limit of the server's own.
  server.keepAliveTimeout = 0;
  server.on('connection', () => {
    seen.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/redfish/v1/Systems/x`;
  return {
    seen,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("a BMC's connection is kept between a reboot's phases", () => {
  it('the simulated BMCs announce a keep-alive the client keeps to in full', async () => {
    const id = world.ids()[0]!;
    const announced = await new Promise<string>((resolve, reject) => {
      http
        .get(host.url(id), { headers: { authorization: `Basic ${Buffer.from('root:calvin').toString('base64')}` } }, (res) => {
          res.resume();
          resolve(String(res.headers['keep-alive']));
        })
        .on('error', reject);
    });
    expect(announced).toBe(`timeout=${BMC_KEEP_ALIVE_MS / 1000}`);
    // undici keeps an announced connection for the timeout less 2 s: not less than the client's own.
    expect(BMC_KEEP_ALIVE_MS - 2000).toBeGreaterThanOrEqual(REDFISH_KEEP_ALIVE_MS);
  });

  it('10 s after a call to a simulated BMC, the next call goes over the same connection', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const [a, b] = world.ids() as [string, string];
    const phases = async (c: RedfishClient, id: string) => {
      const before = host.connections();
      expect(await c.powerState(target(host.url(id), id))).toBe('on');
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await c.powerState(target(host.url(id), id))).toBe('on');
      return host.connections() - before;
    };
    // The control: a client that keeps connections 3 s (undici's default would be 4) opens a second
    // one, so the fake clock does drive undici's keep-alive in this test.
    expect(await phases(client({ keepAliveMs: 3000 }), a)).toBe(2);
    expect(await phases(client(), b)).toBe(1);
  });

  it("a power-on's calls, one after the other, go over one connection", async () => {
    const id = world.ids()[1]!;
    const c = client();
    const before = host.connections();
    await c.power(target(host.url(id), id), 'On');
    await c.powerState(target(host.url(id), id));
    expect(host.connections() - before).toBe(1);
  });

  it('a BMC that announces no keep-alive: the client keeps its connection 60 s, not 4', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const bmc = await scriptedBmc();
    try {
      const c = client();
      await c.powerState(target(bmc.url));
      await vi.advanceTimersByTimeAsync(REDFISH_KEEP_ALIVE_MS - 5000);
      await c.powerState(target(bmc.url));
      expect(bmc.seen.connections).toBe(1);
      await vi.advanceTimersByTimeAsync(REDFISH_KEEP_ALIVE_MS + 5000);
      await c.powerState(target(bmc.url));
      expect(bmc.seen.connections).toBe(2);
    } finally {
      await bmc.close();
    }
  });
});

describe('a BMC that closes connections sooner', () => {
  it('closed while idle: the next call, a Reset too, goes out once on a new connection', async () => {
    const bmc = await scriptedBmc({ closeIdleAfterMs: 200 });
    try {
      const c = client();
      // The Reset goes once the client has seen the BMC's close: one sent before that goes out on the
      // closed connection and fails, not sent twice (the case 'closed under a Reset' below).
      const closed = c.nextDisconnect();
      await c.powerState(target(bmc.url));
      await closed;
      await c.power(target(bmc.url), 'Force-Off');
      expect(bmc.seen.requests.filter((m) => m === 'POST')).toHaveLength(1);
      expect(bmc.seen.connections).toBe(2);
    } finally {
      await bmc.close();
    }
  });

  it('closed under a read: the read is sent again on a new connection and answered', async () => {
    const bmc = await scriptedBmc();
    try {
      const c = client();
      await c.powerState(target(bmc.url));
      bmc.seen.dropNext = 'GET';
      expect(await c.powerState(target(bmc.url))).toBe('on');
      expect(bmc.seen.requests).toEqual(['GET', 'GET', 'GET']);
      expect(bmc.seen.connections).toBe(2);
    } finally {
      await bmc.close();
    }
  });

  it('closed under a Reset: not sent twice, a classified unreachable failure', async () => {
    const bmc = await scriptedBmc();
    try {
      const c = client();
      await c.powerState(target(bmc.url));
      bmc.seen.dropNext = 'POST';
      await expect(c.power(target(bmc.url), 'Force-Off')).rejects.toThrow(/unreachable: .*(UND_ERR_SOCKET|ECONNRESET)/);
      expect(bmc.seen.requests.filter((m) => m === 'POST')).toHaveLength(1);
    } finally {
      await bmc.close();
    }
  });
});

describe('connections kept over many BMCs are bounded', () => {
  // The bound counts every client of the process: the ones of the tests above are closed first.
  beforeAll(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('at most `keepConnections` are kept, to the BMCs called first; the others get a new one each call', async () => {
    const bmcs = await Promise.all([1, 2, 3, 4, 5].map(() => scriptedBmc()));
    try {
      const c = client({ keepConnections: 2 });
      for (const round of [1, 2]) {
        for (const b of bmcs) expect(await c.powerState(target(b.url))).toBe('on');
        expect(c.connectionStats()).toMatchObject({ connected: 2, keep: 2 });
        expect(bmcs.map((b) => b.seen.connections)).toEqual([1, 1, round, round, round]);
      }
      // A second client of the process shares the bound: with both BMCs' connections kept by the
      // first, it keeps none.
      const other = client({ keepConnections: 2 });
      expect(await other.powerState(target(bmcs[0]!.url))).toBe('on');
      expect(other.connectionStats()).toMatchObject({ clients: 0, connected: 0 });
      // A kept connection the BMC closes leaves the client (it holds nothing), making room.
      const closed = c.nextDisconnect();
      await bmcs[0]!.close();
      await closed;
      expect(c.connectionStats()).toMatchObject({ clients: 1, connected: 1 });
    } finally {
      await Promise.all(bmcs.map((b) => b.close()));
    }
  });

  it('the default is half the open-file limit, at most 50,000; 1,024 when it cannot be read', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bootorch-limits-'));
    const limits = (soft: string) => {
      const f = path.join(dir, soft);
      writeFileSync(
        f,
        `Limit                     Soft Limit           Hard Limit           Units\nMax open files            ${soft}                20000                files\n`,
      );
      return f;
    };
    expect(keptConnectionsDefault(limits('20000'))).toBe(10_000);
    expect(keptConnectionsDefault(limits('1048576'))).toBe(50_000);
    expect(keptConnectionsDefault(limits('unlimited'))).toBe(1024);
    expect(keptConnectionsDefault(path.join(dir, 'none'))).toBe(1024);
  });

  /** test/fixtures/redfish-fd-probe.ts under `ulimit -n 64`, asking 200 simulated BMCs, 8 at a time. */
  async function underLowLimit(urls: string[], keep?: number) {
    const { code, out, err } = await underFileLimit(64, 'test/fixtures/redfish-fd-probe.ts', {
      stdin: JSON.stringify({ urls, keep, concurrency: 8 }),
    });
    expect(code, err).toBe(0);
    return JSON.parse(out) as {
      answered: number;
      failures: { kind: string; message: string }[];
      stats: { connected: number; keep: number };
      mostOpen: number;
    };
  }

  it('under a 64-file limit: the default bound answers 200 BMCs; unbounded, EMFILE is local_resources, not the BMC', async () => {
    const many = new SimWorld({ nodes: 200, initial: { power: 'on' } });
    const farm = await startBmcHost(many, { delivered: 0, refused: 0 });
    try {
      const urls = many.ids().map((id) => farm.url(id));
      const bounded = await underLowLimit(urls);
      expect(bounded.failures).toEqual([]);
      expect(bounded.answered).toBe(200);
      expect(bounded.stats).toMatchObject({ keep: 32, connected: 32 });
      expect(bounded.mostOpen).toBeLessThan(64);

      // The control: keeping every connection runs the process out of files, as 100,000 BMCs did.
      const unbounded = await underLowLimit(urls, 1_000_000);
      expect(unbounded.answered).toBeLessThan(200);
      expect(unbounded.failures.length).toBe(200 - unbounded.answered);
      for (const f of unbounded.failures) {
        expect(f.kind).toBe('local_resources');
        expect(f.message).toMatch(
          /local_resources: .*EMFILE: this process's open-file limit is reached \(64 files\): the BMC was not asked/,
        );
      }
    } finally {
      await farm.close();
      many.close();
    }
  });
});
