/**
 * PostgreSQL fails over in the middle of a 2,000-node reboot, and nothing is lost.
 *
 * The database is highly available as sites run it (test/helpers/patroni.ts, Debian's packages): etcd,
 * Patroni managing a primary and a synchronous standby (synchronous_mode: true), each its own
 * PostgreSQL 15 on its own port, and haproxy in front with Patroni's REST check (`GET /primary`,
 * `on-marked-down shutdown-sessions`). bootorch's processes (`bootorch sim` with its nodes reporting
 * over HTTP, `bootorch api`, `bootorch worker`) know only haproxy's address.
 *
 * First the reboot undisturbed, for the reference time. Then the same reboot, and mid-way (once the
 * nodes have started reporting, while power-ons are still going out) the leader's machine is lost:
 * its Patroni and its postmaster SIGKILLed. Patroni promotes the standby once the leader key expires;
 * the failover time is from the kill to a write through haproxy committing. The same bootorch
 * processes, never restarted, must carry on: the session completes with every node booted; every
 * report the API acknowledged is in the database (the simulator lists the reports its nodes got a
 * result for, by node and boot token, and each is a report event of the session with that token); no
 * node is powered on or off twice (the simulator counts the transitions per node); and the disturbed
 * reboot takes at most the failover time plus 10 s longer than the undisturbed one.
 *
 * Runs only with BOOTORCH_FAILOVER_TESTS=1 (.ci/run sets it, after installing patroni, etcd-server and
 * haproxy), and needs those three on the PATH.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { connect, runMigrations, type Connection } from '../../src/db/client.ts';
import { startPatroniCluster, type PatroniCluster } from '../helpers/patroni.ts';
import { haveTools } from '../helpers/tools.ts';
import { FAULT_OPTIONS, gql, startStack, waitFor, type Stack } from './stack.ts';

const NODES = Number(process.env.FAULT_NODES_FAILOVER ?? 2000);
/** The kill comes once this share of the nodes has been powered on (the rest of the power-ons and the first reports in flight). */
const KILL_AT = Number(process.env.FAILOVER_KILL_AT ?? 0.5);
const DB = 'bootorch_failover';

let cluster: PatroniCluster;
let conn: Connection;
let stack: Stack;
let admin: string;

const enabled = process.env.BOOTORCH_FAILOVER_TESTS === '1' && haveTools('PostgreSQL failover test', ['patroni', 'etcd', 'haproxy']);

interface Counters {
  transitions: Record<string, Record<string, number>>;
  reports: { delivered: number; refused: number };
}

/** GET /sim/reports: the reports the simulated nodes got a result for, the seq-th delivered first. */
interface Acknowledged {
  first: number;
  reports: { seq: number; id: string; token: string; at: number }[];
}

const alive = (p: { proc: { exitCode: number | null; signalCode: string | null } }) =>
  p.proc.exitCode === null && p.proc.signalCode === null;

describe.runIf(enabled)('PostgreSQL (Patroni, synchronous standby, haproxy) fails over during a 2,000-node reboot', () => {
  beforeAll(async () => {
    cluster = await startPatroniCluster({ ttl: 10, loopWait: 2, retryTimeout: 5 });
    const c = new pg.Client({ connectionString: cluster.url('postgres') });
    await c.connect();
    await c.query(`create database ${DB}`);
    await c.end();
    conn = connect(cluster.url(DB), { max: 4 });
    conn.pool.on('error', () => {});
    await runMigrations(conn.db);
    // Batches of 100: the power-ons go out in twenty batches, so the kill lands among them.
    await conn.pool.query('insert into options (id, data) values (1, $1)', [
      JSON.stringify({ ...FAULT_OPTIONS, max_component_batch_size: 100 }),
    ]);
    admin = (await createApiToken(conn.db, { role: 'admin', subject: 'fault-tests' })).token;
    stack = await startStack({ databaseUrl: cluster.url(DB), nodes: NODES, timing: 'fast' });
    await waitFor(
      async () => Number((await conn.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      180_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
  }, 400_000);

  afterAll(async () => {
    await stack?.stop();
    await conn?.close().catch(() => {});
    await cluster?.stop();
  }, 120_000);

  test('the standby is promoted, bootorch reconnects by itself, the session completes with nothing lost', async () => {
    const api = stack.apiUrls[0]!;
    const [apiPid, workerPid] = [stack.apis[0]!.proc.pid, stack.worker.proc.pid];
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );
    // The pool's queries go through haproxy too: during the failover one may fail, and is asked again.
    const query = async (text: string, params: unknown[] = []) => {
      for (let i = 0; ; i++) {
        try {
          return (await conn.pool.query(text, params)).rows;
        } catch (e) {
          if (i >= 100) throw e;
          await new Promise((r) => setTimeout(r, 200)); // the test's own reads wait out the failover
        }
      }
    };
    const reboot = async (name: string) => {
      const before = (await stack.simGet('/sim/counters')) as Counters;
      const started = Date.now();
      await gql(
        api,
        admin,
        `mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "${name}" }) { session { name } } }`,
      );
      return { before, started };
    };
    const complete = (name: string) =>
      waitFor(
        async () => {
          const r = (await query(`select * from sessions where name = $1`, [name]))[0];
          return r?.status === 'complete' ? r : undefined;
        },
        `session ${name} complete`,
        600_000,
        () => `${stack.logs()}\n${cluster.logs()}`,
      );
    const delta = (a: Counters, b: Counters, op: string, id: string) => (b.transitions[op]?.[id] ?? 0) - (a.transitions[op]?.[id] ?? 0);

    const powers = (c: Counters, op: string) => Object.values(c.transitions[op] ?? {}).reduce((a, b) => a + b, 0);
    /** An undisturbed reboot: its time, and its reports refused (409 mid-transition, retried by the nodes). */
    const undisturbed = async (name: string) => {
      const r = await reboot(name);
      await complete(name);
      const ms = Date.now() - r.started;
      // The reference must be a clean reboot too: a failure here is not the failover's.
      const failed = await query(
        `select id, failure_reason, error from components where session = $1 and (status = 'failed' or error <> '')`,
        [name],
      );
      expect(failed, `nodes failed in the undisturbed reboot ${name}`).toEqual([]);
      const c = (await stack.simGet('/sim/counters')) as Counters;
      return { ms, refused: c.reports.refused - r.before.reports.refused };
    };

    // Undisturbed, for the reference time (again after the failover, below).
    const calm = await undisturbed('calm');

    // Disturbed: the leader's machine is lost once a share of the nodes has been powered on.
    const sync = await cluster.syncStandby(5_000);
    const run = await reboot('failover');
    await waitFor(
      async () => powers((await stack.simGet('/sim/counters')) as Counters, 'On') - powers(run.before, 'On') >= NODES * KILL_AT,
      `${KILL_AT * 100} % of the nodes powered on`,
      300_000,
      stack.logs,
      20,
    );
    const atKill = (await stack.simGet('/sim/counters')) as Counters;
    const crashed = await cluster.crashLeader();
    const writableAt = await cluster.waitWritable(120_000);
    const failoverMs = writableAt - crashed.at;
    const leader = await cluster.leader(5_000);
    expect(leader, 'the synchronous standby is the new leader').toBe(sync);

    const s = await complete('failover');
    const wallMs = Date.now() - run.started;
    expect(s.error).toBeNull();
    expect(s.components.split(',')).toHaveLength(NODES);
    const after = (await stack.simGet('/sim/counters')) as Counters;

    // Every node booted what the session wanted.
    const rows = await query('select * from components order by id');
    expect(rows).toHaveLength(NODES);
    const notBooted = rows.filter(
      (r) =>
        r.status !== 'stable' ||
        r.phase !== '' ||
        r.enabled ||
        r.error !== '' ||
        r.failure_reason !== '' ||
        r.actual_bss_token !== r.desired_bss_token,
    );
    if (notBooted.length > 0) {
      // What happened to the first few: their event log and what the hardware saw.
      const story = [];
      for (const r of notBooted.slice(0, 3)) {
        const evs = await query(
          `select id, at, kind, actor, action, from_phase, to_phase, from_status, to_status, error, reason, data from component_events where component_id = $1 and session = 'failover' order by id`,
          [r.id],
        );
        const ops = Object.fromEntries(Object.keys(after.transitions).map((op) => [op, delta(run.before, after, op, r.id)]));
        story.push(
          `${r.id} (${r.status}, ${r.phase}, ${r.failure_reason}): power ${JSON.stringify(ops)}\n${evs.map((e) => JSON.stringify(e)).join('\n')}`,
        );
      }
      throw new Error(
        `${notBooted.length} nodes not booted after the failover (crash at ${new Date(crashed.at).toISOString()}, writable at ${new Date(writableAt).toISOString()}):\n${story.join('\n\n')}\n${stack.logs()}`,
      );
    }

    // Every acknowledged report is in the database, by identity: the simulator keeps each report its
    // nodes got a result for (node and boot token); each one written is a `report` event of the
    // session with that token. A report written whose answer was lost in the failover is sent again
    // and written twice, so the database may hold more of a node's reports than were acknowledged,
    // never fewer; and each node's last report is the token it booted with (checked above).
    const acknowledged = after.reports.delivered - run.before.reports.delivered;
    const kept = (await stack.simGet(`/sim/reports?after=${run.before.reports.delivered}`)) as Acknowledged;
    expect(kept.first, 'the simulator kept every report acknowledged in this session').toBeLessThanOrEqual(
      run.before.reports.delivered + 1,
    );
    const acks = kept.reports.filter((r) => r.seq <= after.reports.delivered);
    const reportEvents = await query(
      `select component_id, data->>'token' as token from component_events where session = 'failover' and kind = 'report' and actor like 'node:%' order by id`,
    );
    const stored = reportEvents.length;
    const tally = (rs: { id: string; token: string }[]) => {
      const m = new Map<string, number>();
      for (const r of rs) m.set(`${r.id} ${r.token}`, (m.get(`${r.id} ${r.token}`) ?? 0) + 1);
      return m;
    };
    const storedBy = tally(reportEvents.map((e) => ({ id: e.component_id, token: e.token })));
    const missing = [...tally(acks)]
      .filter(([k, n]) => (storedBy.get(k) ?? 0) < n)
      .map(([k, n]) => `${k}: acknowledged ${n}, stored ${storedBy.get(k) ?? 0}`);
    const reported = new Set(reportEvents.map((e) => e.component_id));
    expect(reported.size, 'nodes with a report stored').toBe(NODES);
    expect(acks.length, 'reports acknowledged, listed against counted').toBe(acknowledged);
    expect(acknowledged, 'reports acknowledged').toBeGreaterThanOrEqual(NODES);
    expect(missing, 'acknowledged reports (node, boot token) not in the database').toEqual([]);
    // Answered between the kill and the first write through haproxy after it (commits from just before the kill).
    const ackedInFailover = acks.filter((r) => r.at > crashed.at && r.at < writableAt).length;

    // No node powered twice: one power-off and one power-on each, as the hardware counted them.
    let doubles = 0;
    const extraOps: string[] = [];
    for (const r of rows) {
      const on = delta(run.before, after, 'On', r.id);
      const off = delta(run.before, after, 'Soft-Off', r.id) + delta(run.before, after, 'Force-Off', r.id);
      if (on !== 1 || off !== 1) doubles++;
      for (const op of Object.keys(after.transitions).filter((o) => !['On', 'Soft-Off', 'Force-Off'].includes(o)))
        if (delta(run.before, after, op, r.id) !== 0) extraOps.push(`${op} ${r.id}`);
    }

    // The same processes carried on: nothing was restarted.
    expect([stack.apis[0]!.proc.pid, stack.worker.proc.pid]).toEqual([apiPid, workerPid]);
    expect(alive(stack.apis[0]!) && alive(stack.worker)).toBe(true);

    // The crashed member back (rewound or copied again) as the synchronous standby, and the same reboot
    // undisturbed once more: the cluster as it was before the kill. The reference is the mean of the two
    // undisturbed runs (this machine's load moves a single run by tens of seconds).
    const rejoinStarted = Date.now();
    await cluster.restartMember(crashed.name);
    const rejoinMs = Date.now() - rejoinStarted;
    const calm2 = await undisturbed('calm-after');
    const calmMs = (calm.ms + calm2.ms) / 2;

    process.stdout.write(
      `\nPostgreSQL failover during a ${NODES}-node reboot: leader ${crashed.name} (Patroni + postmaster SIGKILLed) at ` +
        `${((crashed.at - run.started) / 1000).toFixed(1)} s, with ${atKill.reports.delivered - run.before.reports.delivered} reports and ` +
        `${powers(atKill, 'On') - powers(run.before, 'On')} power-ons done; ${leader} promoted, writes through haproxy again after ` +
        `${(failoverMs / 1000).toFixed(1)} s; session ${(wallMs / 1000).toFixed(1)} s against ${(calmMs / 1000).toFixed(1)} s undisturbed ` +
        `(mean of ${(calm.ms / 1000).toFixed(1)} s before and ${(calm2.ms / 1000).toFixed(1)} s after, ${crashed.name} back as the synchronous standby in ${(rejoinMs / 1000).toFixed(1)} s) ` +
        `(+${((wallMs - calmMs) / 1000).toFixed(1)} s, allowed failover + 10 s = ${((failoverMs + 10_000) / 1000).toFixed(1)} s); ` +
        `reports acknowledged ${acknowledged} (${ackedInFailover} between the kill and writes again), stored ${stored}, every acknowledged one found by node and boot token (not acknowledged and sent again: ${after.reports.refused - run.before.reports.refused}, undisturbed ${calm.refused} and ${calm2.refused}); ` +
        `nodes powered other than once off and once on: ${doubles}; other power operations: ${extraOps.length}; same api and worker processes\n`,
    );
    expect(doubles, 'nodes powered more (or less) than once off and once on').toBe(0);
    expect(extraOps).toEqual([]);
    expect(wallMs - calmMs, 'extra time against the undisturbed reboot').toBeLessThanOrEqual(failoverMs + 10_000);
  }, 1_500_000);
});
