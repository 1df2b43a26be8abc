/**
 * A worker killed with SIGKILL at random moments of a 1,000-node reboot, five times, restarted each
 * time, and each replacement given the chance to act before the next kill: the next kill waits for
 * its first action (an operator tick it finished or an action batch it recorded, read from its own
 * /metrics), and the time from its spawn to being ready (/healthz) and to acting is printed.
 * Processes: `bootorch sim` (1,000 nodes reporting over HTTP with their own node tokens, hardware in
 * seconds), `bootorch api`, and `bootorch worker` (BOOTORCH_ADAPTERS=http), on a fresh database.
 *
 * The moments are random (seeded: FAULT_SEED, printed) points of the reboot's progress, measured in
 * its component events plus what the hardware saw (power transitions and node reports, which arrive
 * one by one, while events commit in chunks), so every kill lands mid-reboot, mid-tick or between
 * ticks, whatever the machine's speed. A reboot whose nodes are all done before the five kills
 * (replacements start slowly on a loaded machine) is followed by another, where the rest land.
 *
 * Then: each reboot completes; every node is stable, booted with the last reboot's boot parameters
 * and without an error; in each reboot no node got more power actions of any kind than the retry
 * policy allows, nor more than bootorch recorded before acting (the simulator's counters against the
 * attempt counters), and the event log is complete: each node's state changes form one unbroken chain
 * from setup to stable (reboot-checks.ts). A second worker process runs throughout and is never
 * killed, so the killed one's active jobs are handed to it; last, the same reboot undisturbed, shared
 * by two worker processes: each node acted on exactly once, and no killed reboot took more than 20 s
 * longer.
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1 (.ci/run sets it).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { createApiToken } from '../../src/auth/index.ts';
import type { RoleProcess } from '../helpers/processes.ts';
import { describeFirstAction, firstAction, type FirstAction } from './first-action.ts';
import { checkReboot, transitionsBetween, type SimCounters } from './reboot-checks.ts';
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
    // Hardware in seconds (the simulator's interactive timing): a reboot outlasts several worker
    // restarts, as a real one (minutes) would; in tenths of a second a whole 1,000-node reboot took
    // about as long as one replacement took to start.
    stack = await startStack({ databaseUrl: db.url, nodes: NODES, timing: 'interactive', workerEnv: { LOG_LEVEL: 'info' } });
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

  test(`${KILLS} kills at random moments, each replacement acting first; every reboot completes with nothing lost`, async () => {
    const api = stack.apiUrls[0]!;
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    const counters = () => stack.simGet('/sim/counters') as Promise<SimCounters>;
    const sessionRow = async (name: string) => (await db.pool.query(`select * from sessions where name = $1`, [name])).rows[0];
    const sessionEvents = (name: string) => count(`select count(*) as n from component_events where session = $1`, [name]);
    const inFlight = (name: string) =>
      count(`select count(*) as n from components where session = $1 and (enabled or status <> 'stable')`, [name]);
    const sumOf = (m: Record<string, number> | undefined) => Object.values(m ?? {}).reduce((a, b) => a + b, 0);
    const hardware = (c: SimCounters) =>
      sumOf(c.transitions.On) + sumOf(c.transitions['Soft-Off']) + sumOf(c.transitions['Force-Off']) + c.reports.delivered;

    const rand = random(SEED);
    const kills: { reboot: string; atEvents: number; progress: number; nodesNotStable: number; sinceStartMs: number }[] = [];
    // Each replacement's spawn to ready (/healthz) and to its first action (a tick or an action batch).
    const replacements: FirstAction[] = [];
    const reboots: { name: string; before: SimCounters; after?: SimCounters; ms?: number }[] = [];
    // A reboot whose nodes are all done before all the kills is followed by another: each kill waits
    // for the previous replacement to act, and on a loaded machine five starts outlast one reboot.
    while (kills.length < KILLS) {
      const name = `reboot-killed-${reboots.length + 1}`;
      const reboot: (typeof reboots)[number] = { name, before: await counters() };
      reboots.push(reboot);
      const started = Date.now();
      await gql(
        api,
        admin,
        `mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "${name}" }) { session { name } } }`,
      );
      // Progress: the reboot's events (about 8 per node) plus the hardware's power transitions and the
      // nodes' reports (3 per node). Kill points are drawn below 6 + 3 per node so all land mid-reboot.
      const hardware0 = hardware(reboot.before);
      const progress = async () => (await sessionEvents(name)) + hardware(await counters()) - hardware0;
      const points = Array.from({ length: KILLS - kills.length }, () => Math.round((0.03 + 0.8 * rand()) * 9 * NODES)).sort(
        (a, b) => a - b,
      );
      let floor = 1;
      for (const point of points) {
        // At the drawn point, once the reboot has moved on since the last kill (the previous
        // replacement has acted by now: waited for below); a reboot with no node left in flight (its
        // setup done, every node stable) ends its kills: a kill then would test nothing.
        const reached = await waitFor(
          async () => {
            const events = await sessionEvents(name);
            if (events > 0 && (await inFlight(name)) === 0) return 'done';
            return events + hardware(await counters()) - hardware0 >= Math.max(point, floor) && 'point';
          },
          `${name}: progress ${point}`,
          180_000,
          stack.logs,
          50,
        );
        if (reached === 'done') break;
        await kill(stack.worker);
        const at = await progress();
        floor = at + 1;
        kills.push({
          reboot: name,
          progress: at,
          atEvents: await sessionEvents(name),
          nodesNotStable: await inFlight(name),
          sinceStartMs: Date.now() - started,
        });
        const port = await freePort();
        const spawned = Date.now();
        const replacement = stack.startWorker({ WORKER_HEALTH_PORT: String(port) });
        // The next kill waits for this one's first action: a replacement killed before it acted would
        // say nothing about a replacement taking over.
        replacements.push(await firstAction(replacement, port, spawned, 120_000));
      }
      const s = await waitFor(
        async () => {
          const r = await sessionRow(name);
          return r?.status === 'complete' ? r : undefined;
        },
        `${name} complete`,
        300_000,
        stack.logs,
      );
      reboot.ms = Date.now() - started;
      reboot.after = await counters();
      expect(s.error, name).toBeNull();
      expect(s.components.split(','), name).toHaveLength(NODES);
    }

    // Every node where the last reboot wanted it.
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

    // Each reboot: no power action beyond the retry policy or not recorded first, every node's event
    // chain unbroken (reboot-checks.ts).
    const ids = rows.map((r) => r.id as string);
    const checked = [];
    for (const r of reboots) checked.push({ ...r, ...(await checkReboot(db.pool, r.name, ids, r.before, r.after!)) });

    process.stdout.write(
      `\nworker SIGKILL x${kills.length} during ${reboots.length} reboot(s) of ${NODES} nodes (seed ${SEED}): ` +
        checked
          .map(
            (r) =>
              `${r.name} completed in ${(r.ms! / 1000).toFixed(1)} s with kills at ${
                kills
                  .filter((k) => k.reboot === r.name)
                  .map(
                    (k) =>
                      `${(k.sinceStartMs / 1000).toFixed(1)} s (progress ${k.progress}, ${k.atEvents} events, ${k.nodesNotStable} nodes in flight)`,
                  )
                  .join(', ') || 'none'
              }, power actions ${r.actions} (minimum ${2 * NODES}, ${r.extra} beyond one off and one on), events ${r.events}`,
          )
          .join('; ') +
        `; nodes lost ${lost} (policy allows ${FAULT_OPTIONS.default_retry_policy} power actions of each kind per node); ` +
        `replacements from spawn (ready: /healthz; acted: its first tick or action batch, each killed only after): ${replacements.map((r, i) => `${i + 1}: ${describeFirstAction(r)}`).join('; ')}\n`,
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
    const wallMs = Math.max(...reboots.map((r) => r.ms!));
    process.stdout.write(
      `undisturbed reboot of the same ${NODES} nodes (after ${(waitedMs / 1000).toFixed(1)} s for the last worker to run): ${(calmMs / 1000).toFixed(1)} s; the slowest killed one took ${((wallMs - calmMs) / 1000).toFixed(1)} s longer; ` +
        `nodes acted on by the two workers: ${acted.map((by, i) => `worker ${i + 1} ${JSON.stringify(by)}`).join(', ')}; each node 1 Soft-Off and 1 On\n`,
    );
    expect(wallMs - calmMs).toBeLessThanOrEqual(20_000);
  }, 900_000);
});
