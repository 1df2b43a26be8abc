/**
 * The Redfish client remembers where each system's Reset action is (src/adapters/standalone/redfish.ts),
 * over real HTTP: against the simulator, a power call to a system already read is a POST alone, one
 * request fewer than the first; against a scripted BMC whose action moved, a 404 or 405 from the
 * remembered target is followed by a read of the system and the Reset at its new target, sent once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimWorld } from '../../src/sim/world.ts';
import { startSimServer, type Exchange, type SimServer } from '../../src/sim/server.ts';
import { RedfishClient } from '../../src/adapters/standalone/redfish.ts';

let world: SimWorld;
let sim: SimServer;
const exchanges: Exchange[] = [];
const clients: RedfishClient[] = [];
const client = () => {
  const c = new RedfishClient({ timeoutMs: 2000 });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  world = new SimWorld({ nodes: 3, initial: { power: 'on' }, powerOnDelayMs: 10, powerOffDelayMs: 10, forceOffDelayMs: 10 });
  sim = await startSimServer(world, { onExchange: (x) => exchanges.push(x) });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await sim?.close();
  world?.close();
});

const login = { username: 'root', password: 'calvin' };
/** The requests a call made to the simulator, as `METHOD path`. */
async function requests(call: () => Promise<unknown>): Promise<string[]> {
  const from = exchanges.length;
  await call();
  return exchanges.slice(from).map((x) => `${x.method} ${x.path}`);
}

describe('the Reset target, remembered per system', () => {
  it('the second power call to a system is one request fewer: no read before its Reset', async () => {
    const id = world.ids()[0]!;
    const t = { id, address: `${sim.url}/redfish/v1/Systems/${id}`, ...login };
    const c = client();
    const system = `/redfish/v1/Systems/${id}`;
    const reset = `${system}/Actions/ComputerSystem.Reset`;
    expect(await requests(() => c.power(t, 'Force-Off'))).toEqual([`GET ${system}`, `POST ${reset}`]);
    await world.waitUntil(() => world.node(id)!.power === 'off', 3000);
    expect(await requests(() => c.power(t, 'On'))).toEqual([`PATCH ${system}`, `POST ${reset}`]);
    await world.waitUntil(() => world.node(id)!.power === 'on', 3000);
    expect(world.counters.transitionCount('Force-Off', id)).toBe(1);
  });

  it('a read of the system (a status pass) is enough: the power call after it is the Reset alone', async () => {
    const id = world.ids()[1]!;
    const t = { id, address: `${sim.url}/redfish/v1/Systems/${id}`, ...login };
    const c = client();
    expect(await c.powerState(t)).toBe('on');
    expect(await requests(() => c.power(t, 'Force-Off'))).toEqual([`POST /redfish/v1/Systems/${id}/Actions/ComputerSystem.Reset`]);
    await world.waitUntil(() => world.node(id)!.power === 'off', 3000);
  });

  it('systems are told apart by their address: a read of one does not serve another', async () => {
    const [a, b] = [world.ids()[0]!, world.ids()[2]!];
    const c = client();
    await c.powerState({ id: a, address: `${sim.url}/redfish/v1/Systems/${a}`, ...login });
    const t = { id: b, address: `${sim.url}/redfish/v1/Systems/${b}`, ...login };
    expect((await requests(() => c.power(t, 'Force-Off')))[0]).toBe(`GET /redfish/v1/Systems/${b}`);
  });

  it.each([404, 405])('a remembered target that answers %i is read again and the Reset sent once to the new one', async (refusal) => {
    const bmc = await movingBmc(refusal);
    try {
      const c = client();
      const t = { id: 'x', address: bmc.url, ...login };
      await c.power(t, 'Force-Off');
      expect(bmc.seen.splice(0)).toEqual(['GET /redfish/v1/Systems/x', 'POST /redfish/v1/Systems/x/Actions/ComputerSystem.Reset 204']);
      // A firmware update moves the action.
      bmc.target = '/redfish/v1/Systems/x/Actions/Oem/Reset';
      await c.power(t, 'On');
      expect(bmc.seen.splice(0)).toEqual([
        'PATCH /redfish/v1/Systems/x',
        `POST /redfish/v1/Systems/x/Actions/ComputerSystem.Reset ${refusal}`,
        'GET /redfish/v1/Systems/x',
        'POST /redfish/v1/Systems/x/Actions/Oem/Reset 204',
      ]);
      expect(bmc.resets).toEqual(['ForceOff', 'On']);
      // The new target is remembered.
      await c.power(t, 'Force-Off');
      expect(bmc.seen.splice(0)).toEqual(['POST /redfish/v1/Systems/x/Actions/Oem/Reset 204']);
    } finally {
      await bmc.close();
    }
  });

  it('any other refusal from a remembered target is the call failing, and the target stays', async () => {
    const bmc = await movingBmc(404);
    try {
      const c = client();
      const t = { id: 'x', address: bmc.url, ...login };
      await c.powerState(t);
      bmc.refuseResets = 500;
      await expect(c.power(t, 'Force-Off')).rejects.toThrow(/bmc_error: .*HTTP 500/);
      bmc.refuseResets = undefined;
      await c.power(t, 'Force-Off');
      expect(bmc.seen).toEqual([
        'GET /redfish/v1/Systems/x',
        'POST /redfish/v1/Systems/x/Actions/ComputerSystem.Reset 500',
        'POST /redfish/v1/Systems/x/Actions/ComputerSystem.Reset 204',
      ]);
    } finally {
      await bmc.close();
    }
  });
});

/** A BMC with one system whose Reset action is at `target`; anywhere else under Actions it answers `refusal`. */
async function movingBmc(refusal: number) {
  const bmc = {
    target: '/redfish/v1/Systems/x/Actions/ComputerSystem.Reset',
    seen: [] as string[],
    resets: [] as string[],
    refuseResets: undefined as number | undefined,
    url: '',
    close: () => Promise.resolve(),
  };
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const answer = (status: number, body?: unknown) => {
        bmc.seen.push(`${req.method} ${req.url}${req.method === 'POST' ? ` ${status}` : ''}`);
        res.writeHead(status, body ? { 'content-type': 'application/json' } : {}).end(body ? JSON.stringify(body) : undefined);
      };
      if (req.url === '/redfish/v1/Systems/x' && req.method === 'GET')
        return answer(200, { PowerState: 'On', Actions: { '#ComputerSystem.Reset': { target: bmc.target } } });
      if (req.url === '/redfish/v1/Systems/x' && req.method === 'PATCH') return answer(204);
      if (req.method === 'POST' && req.url === bmc.target && !bmc.refuseResets) {
        bmc.resets.push(JSON.parse(Buffer.concat(parts).toString()).ResetType);
        return answer(204);
      }
      answer(bmc.refuseResets ?? refusal, { error: { code: 'Base.1.8.GeneralError', message: 'refused' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bmc.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/redfish/v1/Systems/x`;
  bmc.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return bmc;
}
