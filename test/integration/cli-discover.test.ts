/**
 * `bootorch node discover|inspect|list --limit` as a user runs them (a child process per command)
 * against an API with discovery, over real HTTP to the simulator's BMCs (one loopback address each):
 * the dry run stores nothing, the discovery registers, `list --limit` filters by hardware, a changed
 * NIC shows in `inspect --dry-run`, a wrong password exits 1 naming each BMC.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startHarness, type Harness } from './api-harness.ts';
import { runCli } from '../helpers/processes.ts';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { NodeDiscovery } from '../../src/adapters/standalone/discovery.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { bmcAddress, simMac, startBmcHost, type BmcHost } from '../../src/sim/standalone.ts';
import { setSimBmcLogin, setSimHardware } from '../../src/sim/http/redfish-inventory.ts';

const key = randomBytes(32);
let h: Harness;
let world: SimWorld;
let host: BmcHost;
let ids: string[];
let env: Record<string, string>;
beforeAll(async () => {
  world = new SimWorld({ nodes: 4, initial: { power: 'on' } });
  ids = world.ids();
  setSimBmcLogin(world, { username: 'root', password: 'calvin' });
  setSimHardware(world, ids[2]!, { memoryGiB: 2048 });
  host = await startBmcHost(world, { delivered: 0, refused: 0 });
  h = await startHarness({ nodeRegistry: new NodeRegistry(key, new NodeDiscovery({ secretKey: key, timeoutMs: 2000 })) });
  env = { BOOTORCH_URL: h.server.url, BOOTORCH_TOKEN: h.auth.adminToken, BMC_PASSWORD: 'calvin', WRONG: 'nope' };
});
afterAll(async () => {
  await h?.close();
  await host?.close();
  world?.close();
});

const range = () => `${bmcAddress(0)}-${bmcAddress(3).split('.')[3]}`;
const discover = (...more: string[]) =>
  runCli(['node', 'discover', range(), '--user', 'root', '--scheme', 'http', '--port', String(host.port), ...more], env);

describe('bootorch node discover', { timeout: 120_000 }, () => {
  test('dry run, discover, list by hardware, inspect a changed NIC, a wrong password', async () => {
    const dry = await discover('--password-env', 'BMC_PASSWORD', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^ACTION +XNAME +BMC +CHANGES\n/);
    expect(dry.stdout).toContain(`create  ${ids[0]}`);
    expect(dry.stdout).toContain(`mac ${simMac(0)}`);
    expect(dry.stdout).toMatch(/dry run: nothing stored; 4 BMCs asked: 4 new, 0 changed, 0 unchanged, 0 refused, 0 failed\n$/);
    expect((await h.db.pool.query('select count(*)::int as n from node_inventory')).rows[0].n).toBe(0);

    const done = await discover('--password-env', 'BMC_PASSWORD', '--group', 'rack1');
    expect(done).toMatchObject({ code: 0 });
    expect(done.stdout).toMatch(/4 BMCs asked: 4 new/);

    const big = await runCli(['node', 'list', '--limit', 'rack1,&memoryGiB>=1024'], env);
    expect(big.code).toBe(0);
    expect(
      big.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/ +/)[0]),
    ).toEqual([ids[2]]);

    setSimHardware(world, ids[1]!, { macs: ['02:b0:07:aa:bb:cc'] });
    const insp = await runCli(['node', 'inspect', ids[1]!, '--dry-run'], env);
    expect(insp.code).toBe(0);
    expect(insp.stdout).toContain(`mac: ${simMac(1)} -> 02:b0:07:aa:bb:cc`);
    expect(insp.stdout).toMatch(/1 BMC asked: 0 new, 1 changed/);

    const wrong = await discover('--password-env', 'WRONG', '--dry-run');
    expect(wrong.code).toBe(1);
    for (let i = 0; i < 4; i++)
      expect(wrong.stdout).toContain(`✗ ${bmcAddress(i)}: BMC redfish GET Systems failed (HTTP 401): refused_login:`);

    const noPassword = await discover();
    expect(noPassword.code).not.toBe(0);
    expect(noPassword.stderr).toContain('--password-env VAR or --password-file PATH');
  });
});
