/**
 * Status passes proportional to what changed (operators/status.ts), counted by the status operator's
 * own metrics (bootorch_status_passes_total, bootorch_status_rows_read_total, by kind of pass):
 * nodes powered on and waiting for their own report are not re-read while nothing is written, the
 * transit passes re-read only the nodes that wait on the outside world, and a kicked pass reads the
 * rows that changed. A status operator whose every pass read everything would fail it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { local, value } from '../helpers/metrics.ts';
import { waitFor } from '../helpers/wait.ts';

let c: Cluster | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const NODES = 30;

async function counts() {
  const text = await local();
  const of = (name: string) => ({
    full: value(text, name, { pass: 'full' }),
    transit: value(text, name, { pass: 'transit' }),
    changed: value(text, name, { pass: 'changed' }),
  });
  return { passes: of('bootorch_status_passes_total'), rows: of('bootorch_status_rows_read_total') };
}
const sum = (x: { full: number; transit: number; changed: number }) => x.full + x.transit + x.changed;

describe('status passes proportional to what changed', () => {
  it('nodes waiting for their own reports are not re-read; the reports are read as they arrive', async () => {
    c = await startCluster({
      // The nodes boot for 8 s after power-on: long quiet waits for their reports.
      world: { nodes: NODES, initial: { power: 'off' }, bootDelayMs: 8000 },
      // Transit re-polls every 0.5 s (the least the option takes); the full pass (the safety net) only every minute.
      options: { polling_frequency: 60, transit_polling_frequency: 0.5, max_power_on_wait_time: 30, max_boot_wait_time: 60 },
    });
    await c.template('t');
    await c.session('s', { template: 't', operation: 'boot' });
    const ids = (await c.components()).map((r) => r.id);
    await waitFor(async () => ids.every((id) => c!.world.node(id)!.power === 'on'), 'every node powered on', 20_000);

    // Once status has seen them on, nothing waits on PCS or CFS: the transit passes stop.
    let last = await counts();
    let still = 0;
    await waitFor(
      async () => {
        const now = await counts();
        still = now.passes.transit === last.passes.transit && now.passes.full === last.passes.full ? still + 1 : 0;
        last = now;
        return still >= 3; // no full or transit pass for 3 x 0.2 s
      },
      'the transit passes to stop',
      20_000,
      () => JSON.stringify(last),
      200,
    );
    const quiet = await counts();
    // What is measured is an absence (no pass reads anything while the nodes wait), so there is no
    // event to wait on: the window is 1.5 s of the clock the transit passes run on, 3 of their periods.
    await new Promise((r) => setTimeout(r, 1500));
    const after = await counts();
    const reported = (await c.components()).filter((r) => r.actual_kernel !== '');
    expect(reported.length, 'no node reported yet (the window is not quiet otherwise)').toBe(0);
    // 1.5 s of waiting for reports, 3 transit periods: not one component read.
    expect(sum(after.rows) - sum(quiet.rows), 'rows read while every node waits for its report').toBe(0);
    expect(after.passes.full - quiet.passes.full, 'full passes in the quiet window').toBe(0);

    // The reports arrive: each is read by a kicked pass, and the session completes.
    const s = await c.waitForSession('s', 60_000);
    expect(s.error).toBeNull();
    const end = await counts();
    const rows = await c.components();
    for (const r of rows) expect(r, r.id).toMatchObject({ enabled: false, phase: '', status: 'stable', error: '' });
    // From the quiet window to the end: no full pass, and the rows read are those the reports and the
    // passes' own decisions wrote (each node's report, then its configuration and completion), a few
    // times the nodes, not a pass over every node per report.
    expect(end.passes.full - quiet.passes.full, 'full passes after the power-on').toBe(0);
    expect(end.passes.changed - quiet.passes.changed, 'kicked passes').toBeGreaterThan(0);
    expect(sum(end.rows) - sum(quiet.rows), 'rows read from the reports to the end').toBeLessThanOrEqual(6 * NODES);
  }, 120_000);

  it('nodes a job acts on after a pass read them are read by the pass it kicks, not left to the transit pass', async () => {
    const before = await counts(); // the metrics are the process's, across tests
    c = await startCluster({
      world: { nodes: NODES, initial: { booted: true } },
      // No transit pass and no full pass within the test: only kicked passes can move the nodes on.
      options: { polling_frequency: 600, transit_polling_frequency: 300, max_power_off_wait_time: 300 },
    });
    await c.template('t');
    // The race, made certain: when the power-off call comes, a status pass first reads the nodes'
    // power (still on, their decision recorded), and only then does the call go out. The call writes
    // no component row, so the pass it kicks must learn from the job which nodes it acted on.
    const power = c.adapters.power;
    const powerStatus = power.powerStatus.bind(power);
    const transition = power.transition.bind(power);
    let reads = 0;
    power.powerStatus = async (ids) => {
      const r = await powerStatus(ids);
      reads++;
      return r;
    };
    let calls = 0;
    power.transition = async (operation, ids, deadline) => {
      calls++;
      const before = reads;
      await c!.engine.scheduler.kick(c!.db.db, ['status']);
      await waitFor(
        async () => reads > before,
        'a status pass to read the nodes before the call',
        20_000,
        () => `${reads} reads`,
        10,
      );
      return transition(operation, ids, deadline);
    };
    // The process's first pass is full; from it on, every pass is kicked.
    const start = await waitFor(
      async () => ((await counts()).passes.full > before.passes.full ? counts() : undefined),
      'the first full pass',
      20_000,
    );
    await c.session('s', { template: 't', operation: 'shutdown' });
    const s = await c.waitForSession('s', 30_000);
    expect(s.error).toBeNull();
    expect(calls, 'one power-off call').toBe(1);
    const end = await counts();
    expect(end.passes.transit - start.passes.transit, 'transit passes').toBe(0);
    expect(end.passes.full - start.passes.full, 'full passes').toBe(0);
    for (const r of await c.components()) expect(r, r.id).toMatchObject({ enabled: false, phase: '', status: 'stable', error: '' });
    for (const id of c.world.ids()) expect(c.world.node(id)!.power, id).toBe('off');
    // What the job recorded for the pass is forgotten by the pass that read it.
    let left = -1;
    await waitFor(
      async () => (left = Number((await c!.db.pool.query('select count(*) from acted_batches')).rows[0].count)) === 0,
      'the acted batch forgotten',
      10_000,
      () => `${left} left`,
    );
  }, 60_000);
});
