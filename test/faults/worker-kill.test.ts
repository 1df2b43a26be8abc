/**
 * A worker killed with SIGKILL at random moments of a 1,000-node reboot, five times, restarted each
 * time. Processes: `bootorch sim` (1,000 nodes reporting over HTTP with their own node tokens),
 * `bootorch api`, and `bootorch worker` (BOOTORCH_ADAPTERS=http), on a fresh database.
 *
 * The moments are random (seeded: FAULT_SEED, printed) points of the session's progress, measured in
 * its component events plus what the hardware saw (power transitions and node reports, which arrive
 * one by one, while events commit in chunks), so every kill lands mid-session, mid-tick or between
 * ticks, whatever the machine's speed.
 *
 * Then: the session completes; every node is stable, booted with the session's boot parameters and
 * without an error; no node got more power actions of any kind than the retry policy allows, nor more
 * than bootorch recorded before acting (the simulator's counters against the attempt counters); and the
 * event log is complete: each node's state changes form one unbroken chain from setup to stable.
 * A second worker process runs throughout and is never killed, so the killed one's active jobs are
 * handed to it; last, the same reboot undisturbed, shared by two worker processes: each node acted on
 * exactly once, and the killed one took no more than 20 s longer.
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1 (.ci/run sets it).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { createApiToken } from '../../src/auth/index.ts';
import type { RoleProcess } from '../helpers/processes.ts';
import { FAULT_OPTIONS, freePort, gql, kill, startStack, waitFor, type Stack } from './stack.ts';

const NODES = Number(process.env.FAULT_NODES ?? 1000);
const KILLS = 5;
const SEED = Number(process.env.FAULT_SEED ?? Date.now() % 100_000);

let db: TestDb;
let stack: Stack;
let admin: string;
/** The worker startStack started, never killed. */
let steady: RoleProcess;

/** mulberry32: the kill points are reproducible from the printed seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Power transitions of `op` the simulator counted for node `id` between two readings of /sim/counters. */
const transitionsBetween =
  (before: { transitions: Record<string, Record<string, number>> }, after: { transitions: Record<string, Record<string, number>> }) =>
  (op: string, id: string) =>
    (after.transitions[op]?.[id] ?? 0) - (before.transitions[op]?.[id] ?? 0);

const count = async (sql: string, params: unknown[] = []) => Number((await db.pool.query(sql, params)).rows[0].n);

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('a worker killed with SIGKILL during a 1,000-node reboot', () => {
  beforeAll(async () => {
    db = await freshDb();
    // Batches of 100: the action jobs of a step come in ten batches, so two workers both take some.
    await db.pool.query('insert into options (id, data) values (1, $1)', [
      JSON.stringify({ ...FAULT_OPTIONS, max_component_batch_size: 100 }),
    ]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'fault-tests' })).token;
    // Workers log at info: their `action batch` lines tell which worker acted on how many nodes.
    stack = await startStack({ databaseUrl: db.url, nodes: NODES, timing: 'fast', workerEnv: { LOG_LEVEL: 'info' } });
    steady = stack.worker;
    // A second worker; from here on `stack.worker` is this one, killed and restarted below. The first
    // (startStack's) is never killed: the killed one's active jobs are handed to it (its lease reaper).
    stack.startWorker();
    await waitFor(
      async () => (await count('select count(*) as n from components')) === NODES,
      `${NODES} components discovered`,
      120_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  test(`${KILLS} kills at random moments; the session completes with nothing lost`, async () => {
    const api = stack.apiUrls[0]!;
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    const before = await stack.simGet('/sim/counters');
    const started = Date.now();
    await gql(
      api,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "reboot-all" }) { session { name } } }',
    );

    // Progress: the session's events (about 8 per node) plus the hardware's power transitions and the
    // nodes' reports (3 per node). Kill points are drawn below 6 + 3 per node so all land mid-session.
    const rand = random(SEED);
    const points = Array.from({ length: KILLS }, () => Math.round((0.03 + 0.8 * rand()) * 9 * NODES)).sort((a, b) => a - b);
    const kills: { atEvents: number; progress: number; nodesNotStable: number; sinceStartMs: number }[] = [];
    // How long each replacement took from its spawn to acting: its /healthz answers once its engine has
    // started (its queues polled, its lease reaper running). Waited on beside the loop, not in it.
    const replacementsReady: Promise<number | undefined>[] = [];
    const sessionEvents = () => count(`select count(*) as n from component_events where session = 'reboot-all'`);
    const sumOf = (m: Record<string, number> | undefined) => Object.values(m ?? {}).reduce((a, b) => a + b, 0);
    const hardware = (c: any) =>
      sumOf(c.transitions.On) + sumOf(c.transitions['Soft-Off']) + sumOf(c.transitions['Force-Off']) + c.reports.delivered;
    const hardware0 = hardware(before);
    const progress = async () => (await sessionEvents()) + hardware(await stack.simGet('/sim/counters')) - hardware0;
    for (const point of points) {
      // At the drawn point, and after the restarted worker has made progress (a kill of a worker that
      // has not started working yet would test nothing).
      const floor = (kills.at(-1)?.progress ?? 0) + 1;
      await waitFor(async () => (await progress()) >= Math.max(point, floor), `progress ${point}`, 180_000, stack.logs, 50);
      await kill(stack.worker);
      kills.push({
        progress: await progress(),
        atEvents: await sessionEvents(),
        nodesNotStable: await count(
          `select count(*) as n from components where session = 'reboot-all' and (enabled or status <> 'stable')`,
        ),
        sinceStartMs: Date.now() - started,
      });
      const port = await freePort();
      const spawned = Date.now();
      const replacement = stack.startWorker({ WORKER_HEALTH_PORT: String(port) });
      // The next kill may come (by the other worker's progress) before this one is ready: then undefined.
      const gone = () => replacement.proc.exitCode !== null || replacement.proc.signalCode !== null;
      replacementsReady.push(
        waitFor(
          async () =>
            gone()
              ? 'killed'
              : (await fetch(`http://127.0.0.1:${port}/healthz`).then(
                  (r) => r.status === 200,
                  () => false,
                )) && 'ready',
          'the replacement worker ready',
          120_000,
          stack.logs,
          20,
        ).then((r) => (r === 'ready' ? Date.now() - spawned : undefined)),
      );
    }
    const readyMs = await Promise.all(replacementsReady);

    const s = await waitFor(
      async () => {
        const r = (await db.pool.query(`select * from sessions where name = 'reboot-all'`)).rows[0];
        return r?.status === 'complete' ? r : undefined;
      },
      'session complete',
      300_000,
      stack.logs,
    );
    const wallMs = Date.now() - started;
    expect(s.error).toBeNull();
    expect(s.components.split(',')).toHaveLength(NODES);

    // Every node where the session wanted it.
    const rows = (await db.pool.query('select * from components order by id')).rows;
    const kernel = (await db.pool.query(`select desired_kernel from components limit 1`)).rows[0].desired_kernel;
    let lost = 0;
    for (const r of rows) {
      const ok =
        r.status === 'stable' &&
        r.phase === '' &&
        !r.enabled &&
        r.error === '' &&
        r.failure_reason === '' &&
        r.actual_bss_token !== '' &&
        r.actual_bss_token === r.desired_bss_token &&
        r.actual_kernel === kernel;
      if (!ok) lost++;
      expect(r, r.id).toMatchObject({ status: 'stable', phase: '', enabled: false, error: '', failure_reason: '', actual_kernel: kernel });
      expect(r.actual_bss_token, r.id).toBe(r.desired_bss_token);
    }

    // No power action beyond the retry policy, and none bootorch did not record first (an `action` event
    // is written, with its attempt number, before the call to PCS).
    const after = await stack.simGet('/sim/counters');
    const events = (await db.pool.query(`select * from component_events where session = 'reboot-all' order by id`)).rows;
    const recorded = new Map<string, number>();
    for (const e of events.filter((x) => x.kind === 'action')) {
      recorded.set(`${e.component_id} ${e.action}`, (recorded.get(`${e.component_id} ${e.action}`) ?? 0) + 1);
      if (e.data?.attempt !== undefined)
        expect(e.data.attempt, `${e.component_id} ${e.action} attempt`).toBeLessThanOrEqual(FAULT_OPTIONS.default_retry_policy);
    }
    const actionsOf = (id: string, action: string) => recorded.get(`${id} ${action}`) ?? 0;
    const delta = transitionsBetween(before, after);
    const ops = Object.keys(after.transitions);
    let actions = 0;
    let extra = 0;
    for (const r of rows) {
      const on = delta('On', r.id);
      const soft = delta('Soft-Off', r.id);
      const hard = delta('Force-Off', r.id);
      for (const op of ops) actions += delta(op, r.id);
      extra += Math.max(0, on - 1) + Math.max(0, soft + hard - 1);
      expect(on, `On ${r.id}`).toBeGreaterThanOrEqual(1);
      expect(on, `On ${r.id}`).toBeLessThanOrEqual(FAULT_OPTIONS.default_retry_policy);
      expect(on, `On ${r.id} vs recorded actions`).toBeLessThanOrEqual(actionsOf(r.id, 'powering_on'));
      expect(soft + hard, `power-offs ${r.id}`).toBeGreaterThanOrEqual(1);
      expect(soft, `Soft-Off ${r.id}`).toBeLessThanOrEqual(
        Math.min(FAULT_OPTIONS.default_retry_policy, actionsOf(r.id, 'powering_off_gracefully')),
      );
      expect(hard, `Force-Off ${r.id}`).toBeLessThanOrEqual(
        Math.min(FAULT_OPTIONS.default_retry_policy, actionsOf(r.id, 'powering_off_forcefully')),
      );
      for (const op of ops.filter((o) => !['On', 'Soft-Off', 'Force-Off'].includes(o))) expect(delta(op, r.id), `${op} ${r.id}`).toBe(0);
    }

    // The event log is complete: per node, every state change in one unbroken chain from setup to stable.
    const byNode = new Map<string, any[]>();
    for (const e of events) byNode.set(e.component_id, [...(byNode.get(e.component_id) ?? []), e]);
    expect(byNode.size).toBe(NODES);
    for (const r of rows) {
      const evs = byNode.get(r.id)!;
      expect(evs[0], r.id).toMatchObject({ kind: 'setup' });
      expect(
        evs.some((e) => e.kind === 'report' && e.actor === `node:${r.id}`),
        `${r.id} reported`,
      ).toBe(true);
      const changes = evs.filter((e) => e.to_status !== null);
      for (let i = 1; i < changes.length; i++) {
        const [prev, next] = [changes[i - 1], changes[i]];
        if (next.from_status !== null)
          expect(`${next.from_status}`, `${r.id} event ${next.id} follows ${prev.id}`).toBe(`${prev.to_status}`);
      }
      expect(changes.at(-1), r.id).toMatchObject({ to_status: 'stable' });
    }

    process.stdout.write(
      `\nworker SIGKILL x${kills.length} during a ${NODES}-node reboot (seed ${SEED}): ` +
        `completed in ${(wallMs / 1000).toFixed(1)} s; kills at ${kills.map((k) => `${(k.sinceStartMs / 1000).toFixed(1)} s (progress ${k.progress}, ${k.atEvents} events, ${k.nodesNotStable} nodes in flight)`).join(', ')}; ` +
        `nodes lost ${lost}; power actions ${actions} (minimum ${2 * NODES}, ${extra} beyond one off and one on, policy allows ${FAULT_OPTIONS.default_retry_policy} of each per node); ` +
        `events ${events.length}; replacements ready (spawn to /healthz) in ${readyMs.map((ms) => (ms === undefined ? 'killed first' : `${(ms / 1000).toFixed(1)} s`)).join(', ')}\n`,
    );
    expect(kills).toHaveLength(KILLS);
    expect(lost).toBe(0);

    // The same reboot undisturbed, on the same stack: the kills cost seconds, not timeouts (a killed
    // worker's action jobs are reaped and retried by another worker, not waited out). Two worker
    // processes share it (the one never killed and the last one started), and each node is acted on
    // exactly once: one graceful power-off and one power-on as the hardware counted them, no forceful.
    // The last worker started may still be starting (loading, connecting): sharing needs it draining.
    const startingMs = Date.now();
    await stack.worker.waitFor(/"msg":"worker running"/, 120_000);
    const waitedMs = Date.now() - startingMs;
    const calmBefore = await stack.simGet('/sim/counters');
    const sharing = [steady, stack.worker];
    const logFrom = sharing.map((w) => w.output().length);
    const calm = Date.now();
    await gql(
      api,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "reboot-calm" }) { session { name } } }',
    );
    await waitFor(
      async () => (await db.pool.query(`select status from sessions where name = 'reboot-calm'`)).rows[0]?.status === 'complete',
      'undisturbed session complete',
      300_000,
      stack.logs,
    );
    const calmMs = Date.now() - calm;
    const calmAfter = await stack.simGet('/sim/counters');
    const calmDelta = transitionsBetween(calmBefore, calmAfter);
    // Who acted: each worker's `action batch` lines since the calm session began, nodes per action.
    const acted = sharing.map((w, i) => {
      const by: Record<string, number> = {};
      for (const line of w.output().slice(logFrom[i]).split('\n')) {
        if (!line.includes('"action batch"')) continue;
        const { action, nodes } = JSON.parse(line) as { action: string; nodes: number };
        by[action] = (by[action] ?? 0) + nodes;
      }
      return by;
    });
    for (const action of ['powering_off_gracefully', 'powering_on'])
      expect(
        acted.reduce((n, by) => n + (by[action] ?? 0), 0),
        `${action} nodes in both workers' batches`,
      ).toBe(NODES);
    acted.forEach((by, i) =>
      expect(
        Object.values(by).reduce((a, b) => a + b, 0),
        `nodes acted on by worker ${i + 1}`,
      ).toBeGreaterThan(0),
    );
    for (const r of rows) {
      expect(calmDelta('Soft-Off', r.id), `undisturbed Soft-Off ${r.id}`).toBe(1);
      expect(calmDelta('On', r.id), `undisturbed On ${r.id}`).toBe(1);
      for (const op of Object.keys(calmAfter.transitions).filter((o) => !['On', 'Soft-Off'].includes(o)))
        expect(calmDelta(op, r.id), `undisturbed ${op} ${r.id}`).toBe(0);
    }
    process.stdout.write(
      `undisturbed reboot of the same ${NODES} nodes (after ${(waitedMs / 1000).toFixed(1)} s for the last worker to run): ${(calmMs / 1000).toFixed(1)} s; the killed one took ${((wallMs - calmMs) / 1000).toFixed(1)} s longer; ` +
        `nodes acted on by the two workers: ${acted.map((by, i) => `worker ${i + 1} ${JSON.stringify(by)}`).join(', ')}; each node 1 Soft-Off and 1 On\n`,
    );
    expect(wallMs - calmMs).toBeLessThanOrEqual(20_000);
  }, 900_000);
});
