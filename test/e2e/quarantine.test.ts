/**
 * Quarantine: with quarantine_after_failed_sessions 2, a node that fails two sessions in a row is
 * left out of new sessions over its group (the dry run and explain say why) until a session names it
 * in its limit or an operator releases it; a session it completes in resets its count; with the
 * option 0 nothing is quarantined. The in-process engine over the simulated cluster, the API over
 * real HTTP with real tokens, the CLI as a process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSystemState } from '../../src/db/system-state.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';
import { testAuth } from '../helpers/auth.ts';
import { runCli } from '../helpers/processes.ts';

let c: Cluster;
let h: ClusterApi;
let operatorToken = '';
let bad = '';
let flaky = '';
let group: string[] = [];
const gql = (query: string, variables: Record<string, unknown> = {}) => h.gql(query, variables);

/** A reboot of the group's template, to its end; its nodes. */
async function reboot(name: string, limit?: string): Promise<string[]> {
  await c.session(name, { template: 'group', operation: 'reboot', limit });
  const done = await c.waitForSession(name, 90_000);
  expect(done.error).toBeNull();
  return done.components.split(',').filter(Boolean);
}

const run = async (id: string) => {
  const [r] = await c.components([id]);
  return { failed: r.failed_sessions as number, failures: (r.session_failures ?? []) as Array<{ session: string; reason: string }> };
};

const explainQuarantine = async (id: string) =>
  (
    await gql(
      `query($id: ID!) { explain(componentId: $id) { blockers { kind detail }
        quarantine { since failedSessions threshold summary failures { session at reason error } } } }`,
      { id },
    )
  ).explain;

const plan = async (limit?: string) =>
  (
    await gql(
      `query($i: CreateSessionInput!) { planSession(input: $i) { setupError counts { managed skipped }
        nodes { id action skipReason detail } } }`,
      { i: { operation: 'REBOOT', templateName: 'group', limit } },
    )
  ).planSession;

const setThreshold = (k: number) =>
  c.db.pool.query(`update options set data = data || jsonb_build_object('quarantine_after_failed_sessions', $1::int)`, [k]);

beforeAll(async () => {
  c = await startCluster({ options: { quarantine_after_failed_sessions: 2, default_retry_policy: 1 } });
  h = await startClusterApi(c);
  operatorToken = await (await testAuth(c.db.db)).token('operator', { subject: 'op-1' });
  group = c.world.groups.get('compute-a')!.slice().sort();
  [bad, flaky] = group as [string, string];
  await c.template('group', { groups: ['compute-a'] });
}, 120_000);

afterAll(async () => {
  await h?.api.close();
  await c?.close();
});

describe('a node that keeps failing is quarantined', { timeout: 600_000 }, () => {
  it('counts sessions failed in a row; a session the node completes in resets its count', async () => {
    c.world.faults.setNodes('configurationFails', [bad, flaky]);
    expect(await reboot('q1')).toEqual(group);
    expect(await run(bad)).toMatchObject({ failed: 1, failures: [{ session: 'q1', reason: 'configuration_failed' }] });
    expect((await run(flaky)).failed).toBe(1);
    // One failure is below the threshold: nothing is quarantined yet.
    expect((await explainQuarantine(bad)).quarantine).toBeNull();
    expect((await plan()).counts).toEqual({ managed: group.length, skipped: 0 });

    c.world.faults.setNodes('configurationFails', [bad]);
    expect(await reboot('q2')).toEqual(group);
    expect(await run(flaky)).toEqual({ failed: 0, failures: [] });
    expect(await run(bad)).toMatchObject({ failed: 2, failures: [{ session: 'q1' }, { session: 'q2' }] });
    const events = (await c.events({ component: bad })).filter((e) => e.kind === 'quarantine');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ session: 'q2', reason: 'configuration_failed' });
    expect(events[0].error).toMatch(/^quarantined since .*: failed 2 sessions in a row/);
  });

  it('explain says why, since when, after which failures, and what to do', async () => {
    const e = await explainQuarantine(bad);
    expect(e.quarantine).toMatchObject({ failedSessions: 2, threshold: 2 });
    expect(e.quarantine.failures.map((f: { session: string; reason: string }) => [f.session, f.reason])).toEqual([
      ['q1', 'configuration_failed'],
      ['q2', 'configuration_failed'],
    ]);
    expect(e.quarantine.since).toBe(e.quarantine.failures[1].at);
    expect(e.quarantine.summary).toContain(`release it (bootorch node release ${bad})`);
    expect(e.blockers).toContainEqual({ kind: 'quarantined', detail: e.quarantine.summary });
    expect((await explainQuarantine(flaky)).quarantine).toBeNull();
    expect((await readSystemState(c.db.db)).quarantined).toBe(1);
  });

  it('leaves it out of a session over its group, and the dry run says so; a limit naming it includes it', async () => {
    const p = await plan('compute-a');
    expect(p.counts).toEqual({ managed: group.length - 1, skipped: 1 });
    const skipped = p.nodes.find((n: { id: string }) => n.id === bad);
    expect(skipped).toMatchObject({ action: 'SKIP', skipReason: 'QUARANTINED' });
    expect(skipped.detail).toMatch(/^quarantined since .*: failed 2 sessions in a row .*q1 \(configuration_failed\), q2/);

    // A group in the limit does not name the node; nor does `all`.
    expect(await reboot('q3', 'compute-a')).toEqual(group.filter((x) => x !== bad));
    expect((await run(bad)).failed).toBe(2);

    // Named by its xname, it is in; it fails again, and the count goes on.
    expect((await plan(bad)).counts).toEqual({ managed: 1, skipped: group.length - 1 });
    expect(await reboot('q4', bad)).toEqual([bad]);
    expect((await run(bad)).failed).toBe(3);
  });

  it('with the option 0 nothing is quarantined', async () => {
    await setThreshold(0);
    expect((await explainQuarantine(bad)).quarantine).toBeNull();
    expect((await plan()).counts).toEqual({ managed: group.length, skipped: 0 });
    expect((await readSystemState(c.db.db)).quarantined).toBe(0);
    await setThreshold(2);
    expect((await plan()).counts).toEqual({ managed: group.length - 1, skipped: 1 });
  });

  it('release brings it back (the CLI and the mutation), with an event', async () => {
    const env = { BOOTORCH_URL: h.api.url, BOOTORCH_TOKEN: operatorToken };
    const cli = await runCli(['node', 'release', bad, flaky], env);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toBe(`released from quarantine: ${bad}\nnot quarantined (left as they are): ${flaky}\n`);
    expect(await run(bad)).toEqual({ failed: 0, failures: [] });
    const released = (await c.events({ component: bad })).filter((e) => e.kind === 'quarantine').at(-1);
    expect(released).toMatchObject({ actor: 'op-1', data: { released: true, by: 'op-1' } });

    const again = await gql('mutation($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }', { ids: [bad] });
    expect(again.releaseQuarantine).toEqual({ released: [], notQuarantined: [bad] });
    await expect(gql('mutation { releaseQuarantine(ids: ["x9c0s0b0n9"]) { released } }')).rejects.toThrow(/"code":"NOT_FOUND"/);

    c.world.faults.clear();
    expect(await reboot('q5')).toEqual(group);
    expect(await run(bad)).toEqual({ failed: 0, failures: [] });
  });
});
