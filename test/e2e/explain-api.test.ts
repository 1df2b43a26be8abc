/**
 * Beyond BOS over the real API: the dry run equals what session setup then does (randomised limits
 * over a seeded inventory with locked, disabled and ARM nodes), explain and explainSession, the
 * timeline, and pause / resume / abort.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { mulberry32 } from '../../src/sim/random.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';

let c: Cluster;
let api: ClusterApi;
const gql = (query: string, variables: Record<string, unknown> = {}) => api.gql(query, variables);

const PLAN = `query($input: CreateSessionInput!) { planSession(input: $input) {
  valid setupError errors { field message } warnings { message }
  counts { managed skipped powerCycle powerOn powerOff configureOnly nothing unknown }
  bootSets { name nodeCount kernel kernelParameters initrd configuration }
  nodes { id bootSet action skipReason detail } } }`;
const CREATE = `mutation($input: CreateSessionInput!) { createSession(input: $input) { session { name } } }`;

beforeAll(async () => {
  c = await startCluster({
    world: { nodes: 64, armFraction: 0.25, seed: 3, river: true, locked: [], disabled: [], initial: { booted: true } },
    options: { max_power_off_wait_time: 30 },
  });
  const ids = c.world.ids();
  c.world.setLocked([ids[5]!, ids[17]!]);
  c.world.setEnabled([ids[9]!, ids[30]!], false);
  // One node HSM knows that is not a bootorch component (after discovery's start-up pass, which would re-add it).
  await c.waitFor(
    async () =>
      Number(
        (
          await c.db.pool.query(`select count(*) from pgboss.job
    where name = 'bootorch-op-discovery' and state = 'completed'`)
        ).rows[0].count,
      ) > 0,
    'discovery ran',
  );
  const plain = ids.find((id, i) => i > 30 && c.world.node(id)!.arch === 'X86' && c.world.node(id)!.role === 'Compute');
  await c.db.pool.query('delete from components where id = $1', [plain]);
  await c.template('t', { groups: ['compute-a', 'compute-b'] });
  api = await startClusterApi(c);
});
afterAll(async () => {
  await api?.api.close();
  await c?.close();
});

describe('planSession', () => {
  it('equals what session setup does, on randomised limits', async () => {
    const rand = mulberry32(99);
    const ids = c.world.ids();
    const pick = () => ids[Math.floor(rand() * ids.length)]!;
    const tokens = () => {
      const parts = ['compute-a', 'compute-b', 'blade-arm', 'blade-x86', 'Compute', 'all', pick(), pick(), pick()];
      const n = 1 + Math.floor(rand() * 4);
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        const op = i === 0 ? '' : ['', '!', '&'][Math.floor(rand() * 3)]!;
        out.push(op + parts[Math.floor(rand() * parts.length)]);
      }
      return out.join(',');
    };
    for (let i = 0; i < 6; i++) {
      const limit = tokens();
      const input = { operation: 'BOOT', templateName: 't', name: `p${i}`, limit };
      const plan = (await gql(PLAN, { input })).planSession;
      expect(plan.valid, limit).toBe(true);
      await gql(CREATE, { input });
      await c.waitFor(
        async () => (await c.db.pool.query(`select status from sessions where name = $1`, [`p${i}`])).rows[0].status !== 'pending',
        `p${i} set up`,
      );
      const s = (await c.db.pool.query(`select status, error, components from sessions where name = $1`, [`p${i}`])).rows[0];
      const planned = plan.nodes
        .filter((n: any) => n.action !== 'SKIP')
        .map((n: any) => n.id)
        .sort();
      if (plan.setupError) {
        expect(s.error, limit).toBe(plan.setupError);
        expect(planned).toEqual([]);
        continue;
      }
      expect(s.components.split(',').sort(), limit).toEqual(planned);
      const rows = (
        await c.db.pool.query(
          `select id, desired_kernel, desired_kernel_parameters, desired_configuration
        from components where session = $1 order by id`,
          [`p${i}`],
        )
      ).rows;
      for (const r of rows) {
        const bs = plan.bootSets[0];
        expect(r).toMatchObject({
          desired_kernel: bs.kernel,
          desired_kernel_parameters: bs.kernelParameters,
          desired_configuration: bs.configuration,
        });
      }
      // Every node the plan left out has its reason, and none of them was touched by the session.
      for (const n of plan.nodes.filter((x: any) => x.action === 'SKIP')) expect(n.skipReason).toBeTruthy();
      await c.waitForSession(`p${i}`, 60_000);
    }
    const reasons = new Set<string>();
    const all = (await gql(PLAN, { input: { operation: 'REBOOT', templateName: 't', limit: 'all' } })).planSession;
    for (const n of all.nodes) if (n.skipReason) reasons.add(n.skipReason);
    expect([...reasons].sort()).toEqual(['DISABLED_IN_INVENTORY', 'LOCKED', 'NOT_A_COMPONENT', 'WRONG_ARCH']);
    expect(all.counts.powerCycle).toBe(all.counts.managed);
  });

  it('gives the errors createSession would give, and writes nothing', async () => {
    const before = (await c.db.pool.query('select count(*) from sessions')).rows[0].count;
    const bad = (await gql(PLAN, { input: { operation: 'BOOT', templateName: 'nope', limit: 'a,,b' } })).planSession;
    expect(bad.valid).toBe(false);
    expect(bad.errors.map((e: any) => e.field)).toContain('limit');
    const none = (await gql(PLAN, { input: { operation: 'BOOT', templateName: 't', limit: 'x9999c0s0b0n0' } })).planSession;
    expect(none).toMatchObject({ valid: true, setupError: 'No nodes were found to act upon.' });
    expect((await c.db.pool.query('select count(*) from sessions')).rows[0].count).toBe(before);
  });
});

describe('explain, timeline, pause / resume / abort', () => {
  it('explains a node waiting for forceful power-off and a paused session, and aborts it', async () => {
    const x86 = (await c.db.pool.query(`select id from components where id = any($1::text[]) order by id`, [c.world.ids()])).rows.map(
      (r) => r.id,
    );
    const [a, b] = x86.filter((id: string) => c.world.node(id)!.arch === 'X86' && c.world.node(id)!.enabled && !c.world.node(id)!.locked);
    c.world.faults.setNodes('ignoresSoftOff', [a, b]);
    await gql(CREATE, { input: { operation: 'REBOOT', templateName: 't', name: 'ex', limit: `${a},${b}` } });
    await c.waitFor(async () => (await c.components([a])).every((r) => r.status === 'power_off_gracefully_called'), 'graceful');
    const e = (
      await gql(
        `query($id: ID!) { explain(componentId: $id) { summary waitingFor nextOperator status powerState
      decision { rule why } criteria { operator criterion met detail } blockers { kind } lastEvents { kind action } } }`,
        { id: a },
      )
    ).explain;
    expect(e.waitingFor).toBe('FORCEFUL_POWER_OFF');
    expect(e.summary).toMatch(/forceful after 30 s, in \d+ s/);
    expect(e.powerState).toBe('on');
    expect(e.decision.rule).toBe('6');
    expect(e.criteria.some((x: any) => x.operator === 'power-off-forceful' && !x.met)).toBe(true);

    const paused = (await gql(`mutation { pauseSession(name: "ex", reason: "maintenance window") { paused pauseReason } }`)).pauseSession;
    expect(paused).toMatchObject({ paused: true });
    expect(paused.pauseReason).toMatch(/tester: maintenance window/);
    const why = (await gql(`{ explainSession(name: "ex") { remaining paused groups { waitingFor count examples } } }`)).explainSession;
    expect(why).toMatchObject({ remaining: 2, paused: true });
    expect(why.groups[0]).toMatchObject({ waitingFor: 'SESSION_PAUSED', count: 2 });
    expect((await gql(`mutation { resumeSession(name: "ex") { paused } }`)).resumeSession.paused).toBe(false);

    const ab = (await gql(`mutation { abortSession(name: "ex") { stopped session { aborted } } }`)).abortSession;
    expect(ab.stopped.sort()).toEqual([a, b].sort());
    await c.waitForSession('ex');
    const [row] = await c.components([a]);
    expect(row).toMatchObject({ enabled: false, failure_reason: 'aborted', status: 'failed' });

    const page1 = (await gql(`{ componentTimeline(session: "ex", first: 3) { events { cursor kind actor } nextCursor } }`))
      .componentTimeline;
    expect(page1.events).toHaveLength(3);
    const page2 = (
      await gql(
        `query($after: String) { componentTimeline(session: "ex", first: 1000, after: $after) { events { cursor kind actor } nextCursor } }`,
        { after: page1.nextCursor },
      )
    ).componentTimeline;
    expect(Number(page2.events[0].cursor)).toBeGreaterThan(Number(page1.events[2].cursor));
    expect(page2.events.some((x: any) => x.kind === 'failed' && x.actor === 'tester')).toBe(true);
    expect(page2.nextCursor).toBeNull();
  });
});
