/**
 * The engine's log tells a session's story, through a whole session on the in-process engine with
 * real PostgreSQL: one `session ended` line with its nodes by outcome and its failures grouped by
 * reason (two nodes that never power on, one whose boot parameters BSS refuses), and at debug a line
 * per node an action could not act on, carrying the node's xname and its session. The batch line of
 * one session names it as `session`, as every other line about a session does. And the standalone
 * power port's line about a node's failed power task names the node as `xname`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createAdapters } from '../../src/adapters/factory.ts';
import { loadConfig } from '../../src/config.ts';
import { upsertNodes } from '../../src/db/node-inventory.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { waitFor } from '../helpers/wait.ts';
import { logLines } from '../helpers/log-lines.ts';

const { lines, sink } = logLines();

let c: Cluster;
let ids: string[];

beforeAll(async () => {
  const log = createLogger({ level: 'debug', role: 'worker', pretty: false, destination: sink });
  c = await startCluster({ world: { nodes: 5, initial: { power: 'off' } }, options: { default_retry_policy: 1 }, log });
  ids = c.world.ids();
  c.world.faults.setNodes('neverPowersOn', [ids[0]!, ids[1]!]);
  c.world.faults.addNodes('bootParametersRefused', [ids[2]!]);
  // The refused node has a boot set of its own (other kernel parameters), so BSS refuses its group only.
  const bootSet = (nodes: string[], params: string) => ({
    path: c.world.defaultImage.manifest,
    type: 's3',
    arch: 'X86',
    kernel_parameters: params,
    node_list: nodes,
  });
  await c.db.pool.query(
    `insert into session_templates (name, enable_cfs, cfs_configuration, boot_sets) values ('t', true, 'compute-cfg', $1)`,
    [
      JSON.stringify({
        good: bootSet(
          ids.filter((i) => i !== ids[2]),
          'console=ttyS0',
        ),
        odd: bootSet([ids[2]!], 'console=ttyS1'),
      }),
    ],
  );
  await c.session('story', { template: 't', operation: 'boot' });
  await c.waitForSession('story', 60_000);
}, 90_000);
afterAll(async () => {
  await c?.close();
});

describe('the log of a session with failures', () => {
  it('ends with one line: nodes by outcome and failures grouped by reason', () => {
    const ended = lines.filter((l) => l.msg.startsWith('session ended'));
    expect(ended).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'session ended: complete with failures',
        session: 'story',
        result: 'complete_with_failures',
        nodes: 5,
        succeeded: 2,
        failed: 3,
        failures: { power_on_timeout: 2, boot_parameters_failed: 1 },
      }),
    ]);
  });

  it('at debug, a node an action could not act on has a line with its xname and session', () => {
    const refused = lines.filter((l) => l.xname === ids[2]);
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ level: 20, xname: ids[2], session: 'story', action: 'powering_on', reason: 'boot_parameters_failed' }),
      ]),
    );
    // Never one line per node above debug.
    expect(lines.filter((l) => l.level > 20 && l.xname !== undefined)).toEqual([]);
  });

  it('names the session as `session` on every line about this one session', () => {
    const batches = lines.filter((l) => l.msg === 'action batch');
    expect(batches.length).toBeGreaterThan(0);
    for (const b of batches) expect(b, JSON.stringify(b)).toMatchObject({ session: 'story' });
    expect(lines.find((l) => l.msg === 'session set up')).toMatchObject({ session: 'story', nodes: 5 });
  });
});

describe('the standalone power port', () => {
  it("a node's failed power task: a line with its xname", async () => {
    const xname = 'x9000c0s0b0n0';
    // A BMC on a port nothing listens on: the power-on is refused at once.
    await upsertNodes(c.db.db, [
      {
        id: xname,
        hostname: 'n0',
        mac: '02:00:00:90:00:00',
        arch: 'X86',
        role: 'Compute',
        subRole: '',
        groups: [],
        enabled: true,
        locked: false,
        bmcDriver: 'redfish',
        bmcAddress: '127.0.0.1:1',
        bmcUsername: 'root',
        bmcSecret: '',
      },
    ]);
    const log = createLogger({ level: 'info', role: 'worker', pretty: false, destination: sink });
    const env = { BOOTORCH_ADAPTERS: 'standalone', BOOTORCH_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
    const adapters = createAdapters(loadConfig(env), undefined, { db: c.db.db, runHooks: false, logger: log });
    try {
      await adapters.power.transition('On', [xname]);
      const line = await waitFor(async () => lines.find((l) => l.xname === xname), 'the power task failed', 20_000);
      expect(line).toMatchObject({ level: 40, xname, operation: 'On', err: expect.any(String) });
    } finally {
      await adapters.close?.();
    }
  });
});
