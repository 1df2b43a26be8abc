/**
 * The engine's log tells a session's story, through a whole session on the in-process engine with
 * real PostgreSQL: one `session ended` line with its nodes by outcome and its failures grouped by
 * reason (two nodes that never power on, one whose boot parameters BSS refuses), and at debug a line
 * per node an action could not act on, carrying the node's xname and its session. The batch line of
 * one session names it as `session`, as every other line about a session does. A session created
 * through the API carries its request's trace id onto the engine's lines about it, with tracing off.
 * And the standalone power port's line about a node's failed power task names the node as `xname`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logging.ts';
import { createAdapters } from '../../src/adapters/factory.ts';
import { startApiServer } from '../../src/api/server.ts';
import { loadConfig } from '../../src/config.ts';
import { upsertNodes } from '../../src/db/node-inventory.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { waitFor } from '../helpers/wait.ts';
import { logLines } from '../helpers/log-lines.ts';
import { nodeRow } from '../helpers/inventory.ts';
import { testAuth } from '../helpers/auth.ts';

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

describe('a session created through the API, tracing off', () => {
  /**
   * Create a session through the API (the caller's headers added) and wait for its end; the trace id
   * its request's own lines carry (its audit line), and the engine's lines about the session.
   */
  async function createAndRun(name: string, headers: Record<string, string> = {}) {
    // The healthy nodes of the story, booted by it: a reboot acts on them (two action batches).
    await c.template(`${name}-t`, { nodes: [ids[3]!, ids[4]!] });
    const auth = await testAuth(c.db.db);
    const logger = createLogger({ level: 'info', role: 'api', pretty: false, destination: sink });
    const api = await startApiServer({ db: c.db.db, scheduler: c.engine.scheduler, port: 0, host: '127.0.0.1', auth: auth.auth, logger });
    try {
      const res = await fetch(api.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth.bearer(auth.adminToken), ...headers },
        body: JSON.stringify({
          query: `mutation { createSession(input: { operation: REBOOT, templateName: "${name}-t", name: "${name}" }) { session { name } } }`,
        }),
      });
      expect(((await res.json()) as { errors?: unknown }).errors).toBeUndefined();
    } finally {
      await api.close();
    }
    await c.waitForSession(name, 45_000);
    const request = lines.filter((l) => (l.audit as { field?: string } | undefined)?.field === 'createSession').at(-1);
    const about = lines.filter((l) => l.session === name);
    return {
      traceId: request?.traceId,
      setUp: about.filter((l) => l.msg === 'session set up'),
      batches: about.filter((l) => l.msg === 'action batch'),
      ended: about.filter((l) => l.msg.startsWith('session ended')),
    };
  }

  const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  it.each<{ caller: string; name: string; traceparent?: string }>([
    { caller: 'sends no traceparent (a trace id made for the request)', name: 'traced' },
    { caller: 'sends a traceparent (its trace id)', name: 'traced-by-caller', traceparent: `00-${CALLER_TRACE}-00f067aa0ba902b7-01` },
  ])(
    "the engine's lines about it carry the trace id of the request that created it: the caller $caller",
    async ({ name, traceparent }) => {
      const r = await createAndRun(name, traceparent ? { traceparent } : {});
      expect(r.traceId).toMatch(traceparent ? CALLER_TRACE : /^[\da-f]{32}$/);
      expect(r.setUp).toHaveLength(1);
      expect(r.batches.map((l) => l.action)).toEqual(expect.arrayContaining(['powering_off_gracefully', 'powering_on']));
      expect(r.ended).toHaveLength(1);
      for (const l of [...r.setUp, ...r.batches, ...r.ended]) expect(l, JSON.stringify(l)).toMatchObject({ traceId: r.traceId });
    },
    60_000,
  );
});

describe('a session paused by its rollout policy', () => {
  it("'session paused' carries the session's trace id", async () => {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    await c.session('gated', { template: 't', operation: 'boot', limit: `${ids[0]},${ids[1]}`, rollout: { canary: 1 } });
    await c.db.pool.query(`update sessions set trace_context = $1 where name = 'gated'`, [`00-${trace}-b7ad6b7169203331-01`]);
    const paused = await waitFor(
      async () => lines.find((l) => l.msg === 'session paused' && l.session === 'gated'),
      'the canary fails and the session pauses',
      60_000,
    );
    expect(paused).toMatchObject({ session: 'gated', traceId: trace, reason: expect.stringMatching(/^canary failed/) });
  }, 90_000);
});

describe('the standalone power port', () => {
  it("a node's failed power task: a line with its xname", async () => {
    const xname = 'x9000c0s0b0n0';
    // A BMC on a port nothing listens on: the power-on is refused at once.
    await upsertNodes(c.db.db, [
      nodeRow(xname, '02:00:00:90:00:00', { hostname: 'n0', bmcDriver: 'redfish', bmcAddress: '127.0.0.1:1', bmcUsername: 'root' }),
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
