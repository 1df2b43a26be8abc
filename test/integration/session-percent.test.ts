/**
 * "Percent complete" means complete: a node in a disk deploy (its computed status says `stable`), one
 * in transit and one the status operator has not decided yet are never counted as succeeded, through
 * every door that shows a session's status: GraphQL, the BOS REST status and the CLI's line.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';
import { runCli } from '../helpers/processes.ts';

let h: Harness;

/** One component of session `dp`. */
const comp = (id: string, enabled: boolean, phase: string) =>
  sql`insert into components (id, session, enabled, phase) values (${id}, 'dp', ${enabled}, ${phase})`;
const deploy = (id: string, state: string) =>
  sql`insert into component_deploys (id, session, spec, state) values (${id}, 'dp', '{}'::jsonb, ${state})`;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`insert into sessions (name, operation, template_name, status) values ('dp', 'boot', 'cos', 'running')`);
  for (const q of [
    comp('x1c0s0b0n0', false, ''), // done
    comp('x1c0s1b0n0', false, ''), // done: its deploy is active
    deploy('x1c0s1b0n0', 'active'),
    comp('x1c0s2b0n0', true, 'writing'), // deploying: computed status `stable`
    deploy('x1c0s2b0n0', 'writing'),
    comp('x1c0s3b0n0', false, ''), // disabled by hand mid-deploy: not done
    deploy('x1c0s3b0n0', 'booting_disk'),
    comp('x1c0s4b0n0', true, 'powering_on'), // in transit
    comp('x1c0s5b0n0', true, ''), // enabled, not decided yet: computed status `stable`
  ])
    await h.db.db.execute(q);
});
afterAll(async () => {
  await h?.close();
});

describe('percent complete', { timeout: 120_000 }, () => {
  test('GraphQL: 2 of 6 succeeded, not 100 %; the deploying node is in percentDeploying', async () => {
    const s = (
      await h.ok(`{ sessionStatus(name: "dp") { managedComponentsCount percentSuccessful percentFailed
        phases { percentComplete percentPoweringOn percentDeploying } } }`)
    ).sessionStatus;
    expect(s).toEqual({
      managedComponentsCount: 6,
      percentSuccessful: 33.33,
      percentFailed: 0,
      phases: { percentComplete: 33.33, percentPoweringOn: 16.67, percentDeploying: 16.67 },
    });
  });

  test('REST (BOS GET /v2/sessions/{id}/status) says the same', async () => {
    const res = await fetch(`${h.server.baseUrl}/apis/bos/v2/sessions/dp/status`, { headers: h.auth.bearer(h.auth.adminToken) });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { percent_successful: number; phases: { percent_complete: number } };
    expect(body.percent_successful).toBe(33.33);
    expect(body.phases.percent_complete).toBe(33.33);
  });

  test("the CLI's line: 33.33 % complete (2/6), deploying 1", async () => {
    const r = await runCli(['session', 'status', 'dp'], { BOOTORCH_URL: h.server.url, BOOTORCH_TOKEN: h.auth.adminToken });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /^Session dp running for .*: 33\.33% complete \(2\/6\), .*powering on 1, configuring 0, deploying 1, failed 0\n$/,
    );
  });
});
