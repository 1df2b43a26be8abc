/**
 * A BMC's password goes only to that BMC: a Reset action whose target names another origin is not
 * called, and a BMC answering with a redirect is not followed with the credentials. Real HTTP: a fake
 * BMC and a recording listener that stands for anything else on the network.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedfishClient } from '../../src/adapters/standalone/redfish.ts';

let bmc: Server;
let elsewhere: Server;
let bmcUrl = '';
let elsewhereUrl = '';
const seen: IncomingHttpHeaders[] = [];
let resetTarget = '';
let redirectAll = false;

const listen = (s: Server) =>
  new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)));

beforeAll(async () => {
  elsewhere = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  elsewhereUrl = await listen(elsewhere);
  bmc = createServer((req, res) => {
    if (redirectAll) return res.writeHead(307, { location: `${elsewhereUrl}${req.url}` }).end();
    if (req.method === 'GET')
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ PowerState: 'On', Actions: { '#ComputerSystem.Reset': { target: resetTarget } } }));
    res.writeHead(204).end();
  });
  bmcUrl = await listen(bmc);
});
afterAll(async () => {
  await new Promise((r) => bmc.close(r));
  await new Promise((r) => elsewhere.close(r));
});

const target = () => ({ id: 'x3000c0s1b0n0', address: `${bmcUrl}/redfish/v1/Systems/1`, username: 'root', password: 'calvin' });
const client = new RedfishClient({ timeoutMs: 2000 });

it("a Reset target on another origin is refused, and the BMC's credentials never reach it", async () => {
  resetTarget = `${elsewhereUrl}/redfish/v1/Systems/1/Actions/ComputerSystem.Reset`;
  await expect(client.power(target(), 'Force-Off')).rejects.toThrow(/is not the BMC's origin/);
  resetTarget = '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset';
  await expect(client.power(target(), 'Soft-Off')).resolves.toBeUndefined();
  expect(seen).toEqual([]);
});

it('a BMC answering 307 elsewhere is an unexpected answer; the redirect is not followed', async () => {
  redirectAll = true;
  try {
    await expect(client.powerState(target())).rejects.toThrow(/HTTP 307 .*redirects are not followed/);
  } finally {
    redirectAll = false;
  }
  expect(seen).toEqual([]);
});
