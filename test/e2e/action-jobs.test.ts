/**
 * Operators decide, per-component jobs act (engine/action-jobs.ts), on a whole in-process bootorch:
 * the simulated cluster, the engine on pg-boss, real PostgreSQL. The action jobs are read from
 * pg-boss's own table: what was enqueued, retried, delayed; and, since a completed action job is
 * deleted, the completed ones from a copy a trigger keeps of every deleted job (keepCompleted).
 */
import pino from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startEngine, type EngineHandle } from '../../src/engine/runtime.ts';
import { createOperators } from '../../src/operators/index.ts';
import { componentJobs, sessionJobCounts } from '../../src/engine/queue/open-jobs.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';

let c: Cluster | undefined;
let second: EngineHandle | undefined;
let api: ClusterApi | undefined;
afterEach(async () => {
  await api?.api.close();
  api = undefined;
  await second?.stop();
  second = undefined;
  await c?.close();
  c = undefined;
});

interface JobRow {
  name: string;
  state: string;
  data: Record<string, any>;
  retry_count: number;
  retry_limit: number;
  retry_delay: number;
  retry_backoff: boolean;
  start_after: Date;
  created_on: Date;
  started_on: Date | null;
  output: Record<string, any> | null;
}

/**
 * Keep what the engine deletes: a trigger copies every job deleted from pg-boss's job table into
 * `completed_jobs`, for `jobs` to read. The engine deletes an action job when it completes it; pg-boss
 * deletes one too when it fails it, and inserts it again (retry or failed): the last copy of a job no
 * longer in the table is its completion.
 */
async function keepCompleted(cl: Cluster): Promise<void> {
  await cl.db.pool.query(`create table completed_jobs as select * from pgboss.job with no data;
    alter table completed_jobs add column seq bigserial;
    create function keep_completed() returns trigger language plpgsql as $$
      begin insert into completed_jobs select (old).*; return old; end $$;
    create trigger keep_completed before delete on pgboss.job for each row execute function keep_completed();`);
}

/** Every action job of a queue: open ones from pg-boss's job table, completed ones (deleted) from keepCompleted's copy. */
const jobs = async (cl: Cluster, op: string): Promise<JobRow[]> =>
  (
    await cl.db.pool.query(
      `select * from (
        select name, state::text, data, retry_count, retry_limit, retry_delay, retry_backoff, start_after, created_on, started_on, output
        from pgboss.job where name = $1
        union all
        select * from (
          select distinct on (id) name, 'completed', data, retry_count, retry_limit, retry_delay, retry_backoff, start_after, created_on, started_on, output
          from completed_jobs where name = $1 and id not in (select id from pgboss.job where name = $1) order by id, seq desc
        ) last
      ) j order by created_on`,
      [`bootorch-act-${op}`],
    )
  ).rows;

/**
 * Reboot every node of template `t` in session `s` while PCS transitions answer 500 (power status
 * still works, so status decides and the graceful jobs fail): the graceful jobs once each has failed
 * a third time and waits for its next retry.
 */
async function rebootFailingGracefully(cl: Cluster, rollout?: object): Promise<JobRow[]> {
  cl.world.faults.setService('pcs', { failRate: 1, endpoints: ['POST /transitions'] });
  await cl.session('s', { template: 't', operation: 'reboot', rollout });
  const n = cl.world.ids().length;
  // The rows as read when every job was waiting (read again, one could have started its next run).
  let waiting: JobRow[] = [];
  await cl.waitFor(
    async () => {
      waiting = await jobs(cl, 'power-off-graceful');
      return waiting.filter((j) => j.state === 'retry' && j.retry_count >= 2).length === n;
    },
    'every graceful job failed a third time, waiting for its next retry',
    30_000,
  );
  return waiting;
}

/** Every node stable without an error, powered off once and on once. */
async function expectRebootedOnce(cl: Cluster): Promise<void> {
  for (const r of await cl.components()) {
    expect(r, r.id).toMatchObject({ status: 'stable', error: '' });
    expect(transitions(cl, 'Soft-Off', r.id), r.id).toBe(1);
    expect(transitions(cl, 'On', r.id), r.id).toBe(1);
  }
}

/** Three booted, configured nodes, with keepCompleted. */
async function threeBooted(options: Record<string, unknown>): Promise<Cluster> {
  const cl = await startCluster({
    world: { nodes: 3, initial: { booted: true, desiredConfig: 'compute-cfg', configured: true } },
    options,
  });
  await keepCompleted(cl);
  return cl;
}

const transitions = (cl: Cluster, op: string, id: string) => cl.world.counters.transitions.get(op)?.get(id) ?? 0;

describe('per-component action jobs', () => {
  test('a transient PCS failure fails the job, and pg-boss retries it with backoff until PCS is back', async () => {
    // No forceful escalation while the graceful call is being retried; backoff capped at 4 s.
    c = await threeBooted({ max_power_off_wait_time: 120, job_retry_max_delay: 4 });
    await c.template('t');
    const retried = await rebootFailingGracefully(c);
    // Backoff (the option's retryDelay 1 s, doubling): after the third failure the next run is 4 to 8 s
    // away, not 1 s; capped by the option job_retry_max_delay at 4 s (carried on the job).
    for (const j of retried) {
      expect(j, j.data.id).toMatchObject({ retry_delay: 1, retry_backoff: true, data: { retryMaxDelay: 4 } });
      const wait = (j.start_after.getTime() - j.started_on!.getTime()) / 1000;
      expect(wait, j.data.id).toBeGreaterThan(3.9);
      expect(wait, j.data.id).toBeLessThan(4.5);
    }
    // One job per component (the singleton key), still the first decision: attempt 1.
    expect(new Set(retried.map((j) => j.data.id)).size).toBe(3);
    for (const j of retried) expect(j.data).toMatchObject({ action: 'powering_off_gracefully', attempt: 1, session: 's' });
    const comps = await c.components();
    for (const r of comps) {
      expect(r.error, r.id).toMatch(/^PCS POST \/transitions failed \(HTTP 500\)/);
      expect(r.status_override, r.id).toBe('');
      expect(r.power_off_graceful_attempts, r.id).toBe(1);
    }
    expect(c.world.counters.transitions.get('Soft-Off')?.size ?? 0).toBe(0);
    // What explain and componentTimeline show for a node, and sessionStatus counts per queue.
    const open = await componentJobs(c.db.db, comps[0]!.id);
    // Its graceful job retrying, and the forceful decision waiting for max_power_off_wait_time.
    expect(open.find((j) => j.queue === 'power-off-forceful')).toMatchObject({ action: 'decide', state: 'created' });
    const shown = open.find((j) => j.queue === 'power-off-graceful');
    expect(shown).toMatchObject({ queue: 'power-off-graceful', action: 'powering_off_gracefully', attempt: 1, retryLimit: 3 });
    expect(shown!.retries).toBeGreaterThanOrEqual(2);
    expect(shown!.lastError).toMatch(/^PCS POST \/transitions failed \(HTTP 500\)/);
    if (shown!.state === 'retry') expect(shown!.nextRun).toBeInstanceOf(Date);
    const counts = await sessionJobCounts(c.db.db, '', 's');
    expect(counts.filter((x) => x.queue === 'power-off-graceful').reduce((a, x) => a + x.count, 0)).toBe(3);

    c.world.faults.setService('pcs', { failRate: 0, endpoints: undefined });
    const s = await c.waitForSession('s', 60_000);
    expect(s.error).toBeNull();
    await expectRebootedOnce(c);
    const done = await jobs(c, 'power-off-graceful');
    for (const j of done) expect(j, j.data.id).toMatchObject({ state: 'completed' });
    expect(Math.min(...done.map((j) => j.retry_count))).toBeGreaterThanOrEqual(2);
  }, 90_000);

  test("a session's rollout policy sets its jobs' retry delay and backoff; explain, componentTimeline and sessionStatus show them", async () => {
    c = await threeBooted({ max_power_off_wait_time: 120 });
    api = await startClusterApi(c);
    const gql = api.gql;
    // The template's delay, the session's backoff (merged at setup); enough retries to look at them.
    await c.template('t', { rollout: { jobRetryDelay: 2, jobRetryBackoff: true } });
    const retried = await rebootFailingGracefully(c, { jobRetryBackoff: false, retryPolicy: 10 });
    for (const j of retried) {
      expect(j, j.data.id).toMatchObject({
        retry_limit: 10,
        retry_delay: 2,
        retry_backoff: false,
        data: { retryLimit: 10, retryDelay: 2, retryBackoff: false, retryMaxDelay: 5 },
      });
      // Every retry 2 s after the failure (no doubling: 8 s or more, capped at 5, with it; 1 s with the option's delay).
      const wait = (j.start_after.getTime() - j.started_on!.getTime()) / 1000;
      expect(wait, j.data.id).toBeGreaterThan(1.9);
      expect(wait, j.data.id).toBeLessThan(2.6);
      // The third run started no sooner than two delays after the job was enqueued.
      expect((j.started_on!.getTime() - j.created_on.getTime()) / 1000, j.data.id).toBeGreaterThan(3.9);
    }
    const id = retried[0]!.data.id as string;
    const fields = 'queue action state attempt retries retryLimit nextRun lastError';
    const shown = await gql(`{ explain(componentId: "${id}") { jobs { ${fields} } }
      componentTimeline(componentId: "${id}") { jobs { ${fields} } }
      sessionStatus(name: "s") { jobs { queue state count } } }`);
    for (const js of [shown.explain.jobs, shown.componentTimeline.jobs]) {
      expect(js.find((j: { queue: string }) => j.queue === 'power-off-forceful')).toMatchObject({ action: 'decide', state: 'created' });
      const g = js.find((j: { queue: string }) => j.queue === 'power-off-graceful')!;
      expect(g).toMatchObject({ action: 'powering_off_gracefully', attempt: 1, retryLimit: 10 });
      expect(['retry', 'active']).toContain(g.state);
      expect(g.retries).toBeGreaterThanOrEqual(2);
      expect(g.lastError).toMatch(/^PCS POST \/transitions failed \(HTTP 500\)/);
      if (g.state === 'retry') expect(Date.parse(g.nextRun)).toBeGreaterThan(Date.now() - 10_000);
    }
    const counts = shown.sessionStatus.jobs as Array<{ queue: string; state: string; count: number }>;
    expect(counts.filter((x) => x.queue === 'power-off-graceful').reduce((a, x) => a + x.count, 0)).toBe(3);
    // The delayed forceful decisions: one job per batch acted on together (here one or two for the three nodes).
    expect(counts.filter((x) => x.queue === 'power-off-forceful').reduce((a, x) => a + x.count, 0)).toBeGreaterThanOrEqual(1);

    c.world.faults.setService('pcs', { failRate: 0, endpoints: undefined });
    const s = await c.waitForSession('s', 60_000);
    expect(s.error).toBeNull();
    for (const r of await c.components()) expect(r, r.id).toMatchObject({ status: 'stable', error: '' });
    // The graceful jobs completed; the forceful decisions still wait out max_power_off_wait_time (then do nothing).
    const after = await gql(`{ sessionStatus(name: "s") { jobs { queue state count } } }`);
    expect(after.sessionStatus.jobs).toContainEqual({ queue: 'power-off-forceful', state: 'created', count: expect.any(Number) });
    expect(after.sessionStatus.jobs.filter((x: { queue: string }) => x.queue.startsWith('power-off-graceful'))).toEqual([]);
  }, 90_000);

  test('the forceful power-off is decided again per component by a job delayed by max_power_off_wait_time (one per batch acted on together), a no-op for nodes already off', async () => {
    c = await threeBooted({ max_power_off_wait_time: 3 });
    const [stubborn, ...others] = c.world.ids();
    c.world.faults.addNodes('ignoresSoftOff', [stubborn!]);
    await c.template('t');
    await c.session('s', { template: 't', operation: 'reboot' });
    const s = await c.waitForSession('s', 60_000);
    expect(s.error).toBeNull();

    // Every node is named by one delayed decision after its graceful call (one job per batch acted on
    // together), to start 3.5 s after it; the stubborn node by one more, after its forceful call.
    const all = (await jobs(c, 'power-off-forceful')).filter((j) => j.data.due);
    for (const id of others)
      expect(
        all.filter((j) => j.data.ids.includes(id)),
        id,
      ).toHaveLength(1);
    expect(all.filter((j) => j.data.ids.includes(stubborn))).toHaveLength(2);
    expect(all.every((j) => j.data.session === 's')).toBe(true);
    const events = await c.events({ session: 's' });
    const graceful = new Map(events.filter((e) => e.action === 'powering_off_gracefully').map((e) => [e.component_id, e.at as Date]));
    for (const id of c.world.ids()) {
      const j = all.find((x) => x.data.ids.includes(id))!;
      const delay = (j.start_after.getTime() - graceful.get(id)!.getTime()) / 1000;
      expect(delay, id).toBeGreaterThan(3);
      expect(delay, id).toBeLessThan(5);
      expect(j.state, id).toBe('completed');
    }
    // The stubborn node was forced off once, after the wait; the others were not forced at all.
    expect(transitions(c, 'Force-Off', stubborn!)).toBe(1);
    const forced = events.find((e) => e.component_id === stubborn && e.action === 'powering_off_forcefully');
    expect((forced.at.getTime() - graceful.get(stubborn!)!.getTime()) / 1000).toBeGreaterThanOrEqual(3);
    for (const id of others) {
      expect(transitions(c, 'Force-Off', id), id).toBe(0);
      expect(events.some((e) => e.component_id === id && e.action === 'powering_off_forcefully')).toBe(false);
    }
    for (const r of await c.components()) expect(r, r.id).toMatchObject({ status: 'stable', enabled: false });
  }, 90_000);

  test('the power-on wait is a status decision per component, delayed by max_power_on_wait_time: no pass is needed to see a timeout', async () => {
    // Passes only every 10 minutes: without the delayed decision the timeout would wait for one.
    c = await startCluster({
      world: { nodes: 2, initial: { power: 'off' } },
      options: { max_power_on_wait_time: 3, transit_polling_frequency: 600, polling_frequency: 600, default_retry_policy: 1 },
    });
    await keepCompleted(c);
    const [dead, ok] = c.world.ids();
    c.world.faults.setNodes('neverPowersOn', [dead!]);
    await c.template('t');
    await c.session('s', { template: 't', operation: 'boot' });
    const s = await c.waitForSession('s', 45_000);
    expect(s.error).toBeNull();
    const [d] = await c.components([dead!]);
    expect(d).toMatchObject({ status: 'failed', failure_reason: 'power_on_timeout' });
    const [o] = await c.components([ok!]);
    expect(o).toMatchObject({ status: 'stable' });
    // A decision naming the node came due about max_power_on_wait_time after the power-on call (the
    // event's time is its transaction's start, so a loaded machine puts it a little either side of
    // 3 s) and was made. A kicked pass (the other node's report) may see the timeout first.
    const events = await c.events({ session: 's' });
    const powerOn = events.find((e) => e.component_id === dead && e.action === 'powering_on')!.at as Date;
    const due = (await jobs(c, 'status')).filter((j) => j.data.due && j.data.ids.includes(dead));
    const delays = due.map((j) => [(j.start_after.getTime() - powerOn.getTime()) / 1000, j.state]);
    expect(
      delays.filter(([d, state]) => (d as number) > 2.5 && (d as number) < 4.5 && state === 'completed').length,
      JSON.stringify(delays),
    ).toBeGreaterThanOrEqual(1);
    const failed = events.find((e) => e.component_id === dead && e.reason === 'power_on_timeout')!.at as Date;
    expect((failed.getTime() - powerOn.getTime()) / 1000).toBeLessThan(8);
  }, 90_000);

  test('one node refused permanently in a batch fails alone; the batch goes on', async () => {
    c = await startCluster({ world: { nodes: 6 } });
    await keepCompleted(c);
    const ids = c.world.ids();
    const bad = ids[2]!;
    c.world.faults.addNodes('bootParametersRefused', [bad]);
    // Its own boot set (other kernel parameters), so BSS refuses its group, not the others'.
    await c.db.pool.query(
      `insert into session_templates (name, enable_cfs, cfs_configuration, boot_sets) values ('t', true, 'compute-cfg', $1)`,
      [
        JSON.stringify({
          good: {
            path: c.world.defaultImage.manifest,
            type: 's3',
            arch: 'X86',
            kernel_parameters: 'console=ttyS0',
            node_list: ids.filter((i) => i !== bad),
          },
          odd: { path: c.world.defaultImage.manifest, type: 's3', arch: 'X86', kernel_parameters: 'console=ttyS1', node_list: [bad] },
        }),
      ],
    );
    await c.session('s', { template: 't', operation: 'boot' });
    const s = await c.waitForSession('s', 60_000);
    expect(s.error).toBeNull();
    const on = await jobs(c, 'power-on');
    // The six jobs were acted on together (one batch: the same start), each ended on its own.
    expect(on).toHaveLength(6);
    expect(new Set(on.map((j) => j.started_on?.getTime())).size).toBe(1);
    // Each completed (the bad node's job too: its failure is permanent, so no retry; it is on the component).
    for (const j of on) expect(j, j.data.id).toMatchObject({ state: 'completed', retry_count: 0 });
    for (const r of await c.components()) {
      if (r.id === bad) {
        expect(r).toMatchObject({ status: 'failed', failure_reason: 'boot_parameters_failed' });
        expect(r.error).toMatch(/boot parameters refused/);
        expect(transitions(c, 'On', r.id)).toBe(0);
      } else {
        expect(r, r.id).toMatchObject({ status: 'stable', error: '' });
        expect(transitions(c, 'On', r.id), r.id).toBe(1);
      }
    }
  }, 90_000);

  test('two engines share one reboot: every node acted on exactly once', async () => {
    c = await startCluster({
      world: { nodes: 40, initial: { booted: true, desiredConfig: 'compute-cfg', configured: true } },
      // Small batches, so both engines' workers take some. Waits long enough that a loaded machine's
      // slow pass cannot time a power-on out (that would be a second power-on, not a shared reboot).
      options: { max_component_batch_size: 5, max_power_off_wait_time: 10, max_power_on_wait_time: 15, max_boot_wait_time: 30 },
    });
    await keepCompleted(c);
    second = await startEngine({
      url: c.db.url,
      db: c.db.db,
      adapters: c.adapters,
      operators: createOperators(),
      log: pino({ level: 'silent' }),
    });
    await c.template('t');
    await c.session('s', { template: 't', operation: 'reboot' });
    const s = await c.waitForSession('s', 90_000);
    expect(s.error).toBeNull();
    await expectRebootedOnce(c);
    // One recorded action of each, attempt 1 (the counters are reset when the session completes).
    const actions = (await c.events({ session: 's' })).filter((e) => e.kind === 'action');
    for (const action of ['powering_off_gracefully', 'powering_on']) {
      const of = actions.filter((e) => e.action === action);
      expect(of, action).toHaveLength(40);
      expect(new Set(of.map((e) => e.component_id)).size, action).toBe(40);
      for (const e of of) expect(e.data, `${action} ${e.component_id}`).toEqual({ attempt: 1 });
    }
    for (const op of ['power-off-graceful', 'power-on']) {
      const js = await jobs(c, op);
      expect(js, op).toHaveLength(40);
      for (const j of js) expect(j, `${op} ${j.data.id}`).toMatchObject({ state: 'completed', retry_count: 0 });
    }
  }, 120_000);
});
