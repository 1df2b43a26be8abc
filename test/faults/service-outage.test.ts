/**
 * An outside service down for a while: PCS answers 503 (every call, through the client's retries)
 * while a reboot of half the machine runs. Processes: `bootorch sim`, `bootorch api`, `bootorch worker`.
 *
 * The session's nodes must record errors naming PCS, again and again (retried, not failed), then
 * complete once PCS is back, within the retry policy. The other half of the machine, healthy and in no
 * session, must not notice: no event, no power action, its rows unchanged.
 *
 * Runs only with BOOTORCH_FAULT_TESTS=1.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { FAULT_OPTIONS, gql, startStack, waitFor, type Stack } from './stack.ts';

const NODES = Number(process.env.FAULT_NODES_SERVICE ?? 200);
const RETRY_POLICY = 10;

let db: TestDb;
let stack: Stack;
let admin: string;

const snapshot = async (ids: string[]) =>
  JSON.stringify(
    (
      await db.pool.query(
        `select id, enabled, phase, status, last_action,
  last_action_at, error, session, actual_kernel, actual_bss_token, desired_bss_token, updated_at from components where id = any($1) order by id`,
        [ids],
      )
    ).rows,
  );

describe.runIf(process.env.BOOTORCH_FAULT_TESTS === '1')('an outside service down for a while', () => {
  beforeAll(async () => {
    db = await freshDb();
    await db.pool.query('insert into options (id, data) values (1, $1)', [
      JSON.stringify({ ...FAULT_OPTIONS, default_retry_policy: RETRY_POLICY }),
    ]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'fault-tests' })).token;
    stack = await startStack({ databaseUrl: db.url, nodes: NODES, timing: 'fast' });
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
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

  test("PCS down: errors and retries on the session's nodes, then recovery; the healthy nodes unaffected", async () => {
    const api = stack.apiUrls[0]!;
    const info = await stack.simGet('/sim/info');
    expect(info.groups).toEqual(expect.arrayContaining(['compute-a', 'compute-b']));
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "half", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a'] }] },
    );
    const plan = await gql(api, admin, '{ planSession(input: { operation: REBOOT, templateName: "half" }) { nodes { id action } } }');
    const inSession: string[] = plan.planSession.nodes
      .filter((n: { action: string }) => n.action !== 'SKIP')
      .map((n: { id: string }) => n.id)
      .sort();
    const all = (await db.pool.query('select id from components order by id')).rows.map((r) => r.id as string);
    const healthy = all.filter((id) => !inSession.includes(id));
    expect(inSession.length).toBeGreaterThan(0);
    expect(healthy.length).toBeGreaterThan(0);
    const healthyBefore = await snapshot(healthy);
    const lastEvent = Number((await db.pool.query('select coalesce(max(id), 0) as m from component_events')).rows[0].m);
    const c0 = await stack.simGet('/sim/counters');

    await stack.simFaults({ services: { pcs: { down: true } } });
    const down = Date.now();
    await gql(
      api,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "half", name: "outage" }) { session { name } } }',
    );
    // Errors naming PCS on every node of the session; then PCS keeps being asked (retried, not given up on).
    const errorsPerNode = async () =>
      new Map(
        (
          await db.pool.query(`select component_id, count(*)::int as n from component_events
      where session = 'outage' and kind = 'error' and error like 'PCS %' group by component_id`)
        ).rows.map((r) => [r.component_id as string, r.n as number]),
      );
    let lastSeen = '';
    await waitFor(
      async () => {
        const m = await errorsPerNode();
        lastSeen = JSON.stringify({
          counts: [...m.values()].slice(0, 10),
          events: (
            await db.pool.query(
              `select kind, error, to_status, action from component_events where session = 'outage' order by id desc limit 8`,
            )
          ).rows,
        });
        return inSession.every((id) => (m.get(id) ?? 0) >= 1);
      },
      'every session node errored on PCS',
      120_000,
      () => lastSeen,
    );
    const pcsCalls = (c: any) =>
      Object.entries(c.calls as Record<string, number>)
        .filter(([k]) => k.startsWith('pcs '))
        .reduce((n, [, v]) => n + v, 0);
    const atErrors = pcsCalls(await stack.simGet('/sim/counters'));
    // Each try is one call and the client's 3 retries: four more tries after every node has its error.
    await waitFor(async () => pcsCalls(await stack.simGet('/sim/counters')) >= atErrors + 16, 'PCS retried', 60_000, stack.logs);
    const retried = pcsCalls(await stack.simGet('/sim/counters')) - pcsCalls(c0);
    const during = (
      await db.pool.query(`select id, error, failure_reason, status, enabled from components where id = any($1)`, [inSession])
    ).rows;
    for (const r of during) {
      expect(r.error, r.id).toMatch(/^PCS .*(503|unavailable)/i);
      expect(r.status, r.id).not.toBe('failed');
      expect(r.enabled, r.id).toBe(true);
    }
    const errors = [...(await errorsPerNode()).values()];

    await stack.simFaults({ services: { pcs: { down: false } } });
    const outageMs = Date.now() - down;
    const up = Date.now();
    const s = await waitFor(
      async () => {
        const r = (await db.pool.query(`select * from sessions where name = 'outage'`)).rows[0];
        return r?.status === 'complete' ? r : undefined;
      },
      'session complete after PCS is back',
      180_000,
      stack.logs,
    );
    const recoveryMs = Date.now() - up;
    expect(s.error).toBeNull();
    expect(s.components.split(',').sort()).toEqual(inSession);
    for (const r of (await db.pool.query(`select * from components where id = any($1)`, [inSession])).rows) {
      expect(r, r.id).toMatchObject({ status: 'stable', phase: '', enabled: false, error: '', failure_reason: '' });
      expect(r.actual_bss_token, r.id).toBe(r.desired_bss_token);
    }

    // What the hardware saw: the session's nodes power-cycled within the policy, the others untouched.
    const c1 = await stack.simGet('/sim/counters');
    const delta = (op: string, id: string) => (c1.transitions[op]?.[id] ?? 0) - (c0.transitions[op]?.[id] ?? 0);
    for (const id of inSession) {
      expect(delta('On', id), `On ${id}`).toBeGreaterThanOrEqual(1);
      expect(delta('On', id), `On ${id}`).toBeLessThanOrEqual(RETRY_POLICY);
    }
    for (const id of healthy) for (const op of Object.keys(c1.transitions)) expect(delta(op, id), `${op} ${id}`).toBe(0);
    expect(await snapshot(healthy)).toBe(healthyBefore);
    const foreign = await db.pool.query('select count(*)::int as n from component_events where id > $1 and component_id = any($2)', [
      lastEvent,
      healthy,
    ]);
    expect(foreign.rows[0].n).toBe(0);

    process.stdout.write(
      `\nPCS down ${(outageMs / 1000).toFixed(1)} s during a reboot of ${inSession.length} of ${NODES} nodes: ` +
        `every node with an error naming PCS (${errors.length} nodes), ${retried} PCS calls refused meanwhile (tries and retries), none failed; session complete ${(recoveryMs / 1000).toFixed(1)} s after PCS came back; ` +
        `${healthy.length} healthy nodes: 0 events, 0 power actions, rows unchanged\n`,
    );
  }, 600_000);
});
