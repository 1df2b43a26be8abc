/**
 * What the standalone adapters and discovery leave open to BMCs, counted at a scripted Redfish BMC
 * that keeps a connection for as long as the client does: the adapters' close() ends the Redfish
 * connections their power calls kept (as a worker or API replica stops), and a discovery or
 * re-inspection sweep ends its own when it returns.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { createStandaloneAdapters } from '../../src/adapters/standalone/factory.ts';
import { NodeDiscovery } from '../../src/adapters/standalone/discovery.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';

const XNAME = 'x3000c0s1b0n0';
const key = randomBytes(32);
let db: TestDb;
let bmc: Awaited<ReturnType<typeof scriptedBmc>>;

/** One ComputerSystem at /redfish/v1/Systems/x; its open connections, and a wake on each one's close. */
async function scriptedBmc() {
  const system = {
    Id: 'x',
    PowerState: 'On',
    Actions: { '#ComputerSystem.Reset': { target: '/redfish/v1/Systems/x/Actions/ComputerSystem.Reset' } },
  };
  const server = http.createServer((req, res) => {
    req.resume();
    const body = req.url === '/redfish/v1/Systems' ? { Members: [{ '@odata.id': '/redfish/v1/Systems/x' }] } : system;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  // No idle limit of the BMC's own: a connection ends only when the client ends it.
  server.keepAliveTimeout = 0;
  const open = new Set<Socket>();
  const wake = new Set<() => void>();
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => {
      open.delete(s);
      for (const w of wake) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/redfish/v1/Systems/x`,
    open: () => open.size,
    /** Resolves once no connection is open; rejects after `ms`. */
    allClosed: (ms: number) =>
      waitFor(
        async () => open.size === 0,
        'every BMC connection closed',
        ms,
        () => `${open.size} open`,
        1000,
        wake,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  db = await freshDb();
  bmc = await scriptedBmc();
  const r = await new NodeRegistry(key).register(db.db, [
    { xname: XNAME, mac: '52:54:00:00:09:01', bmc: { driver: 'redfish', address: bmc.url, username: 'root', password: 'calvin' } },
  ]);
  expect(r.ok).toBe(true);
});
afterAll(async () => {
  await bmc?.close();
  await db?.drop();
});

describe('Redfish connections to BMCs', () => {
  it("the standalone adapters' close() ends the connections their power calls kept", async () => {
    const adapters = createStandaloneAdapters({ db: db.db, secretKey: key, bmcTimeoutMs: 2000 });
    try {
      expect((await adapters.power.powerStatus([XNAME])).get(XNAME)).toEqual({ state: 'on', error: '' });
      expect(bmc.open()).toBe(1);
    } finally {
      await adapters.close?.();
    }
    await bmc.allClosed(2000);
  });

  it('a discovery sweep and a re-inspection each end their connections when they return', async () => {
    const discovery = new NodeDiscovery({ secretKey: key, timeoutMs: 2000 });
    const found = await discovery.discover(db.db, {
      targets: ['127.0.0.1'],
      scheme: 'http',
      port: bmc.port,
      username: 'root',
      password: 'calvin',
      dryRun: true,
    });
    expect(found.ok && found.value.failures).toEqual([]);
    await bmc.allClosed(2000);
    const inspected = await discovery.inspect(db.db, [XNAME], true);
    expect(inspected.ok && inspected.value.failures).toEqual([]);
    await bmc.allClosed(2000);
  });
});
