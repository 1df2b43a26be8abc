/**
 * The BOS v2 REST door over real HTTP: components and applystaged (bos-clients.md rows 5-9), and the
 * bos-reporter's PATCH (row 12) through the batched report path with BOS's 409 rule. Every exchange is
 * checked against bos-v2.openapi.yaml.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from '../integration/api-harness.ts';
import { createReportBatcher, type ReportBatcher } from '../../src/engine/reports.ts';
import type { Scheduler } from '../../src/engine/scheduler.ts';
import { bosClient, loadBosContract, type BosClient } from './bos-client.ts';

let h: Harness;
let bos: BosClient;
let reports: ReportBatcher;
const A = 'x1000c0s0b0n0';
const B = 'x1000c0s0b0n1';
const C = 'x1000c0s1b0n0';
const NAIVE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

beforeAll(async () => {
  await loadBosContract();
  // The report batcher's kicks go to the harness's recording scheduler, like the server's own.
  let scheduler: Harness['scheduler'] | undefined;
  const lazy: Scheduler = {
    kick: (db, ops) => scheduler!.kick(db, ops),
    wakeAt: (db, op, at) => scheduler!.wakeAt(db, op, at),
    poll: (op, s) => scheduler!.poll(op, s),
    enqueueActions: (db, op, jobs) => scheduler!.enqueueActions(db, op, jobs),
    decideLater: (db, op, rows, s) => scheduler!.decideLater(db, op, rows, s),
  };
  h = await startHarness({ reports: { report: (i) => reports.report(i), stats: () => reports.stats() } });
  scheduler = h.scheduler;
  reports = createReportBatcher(h.db.db, lazy);
  bos = bosClient(`${h.server.baseUrl}/apis/bos`, h.auth.bearer(h.auth.adminToken));
  await h.db.db.execute(sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd)
    values ('tok-a', 's3://boot-images/a/kernel', 'console=ttyS0', 's3://boot-images/a/initrd')`);
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  await h.db.db.execute(sql`delete from components`);
  await h.db.db.execute(sql`delete from component_events`);
  const put = await bos.req('PUT', '/v2/components', {
    body: [A, B, C].map((id) => ({
      id,
      enabled: false,
      error: '',
      session: '',
      last_action: { action: 'newly_discovered', failed: false },
      actual_state: { boot_artifacts: { kernel: '', kernel_parameters: '', initrd: '' }, bss_token: '' },
    })),
  });
  expect(put.status).toBe(200);
});
afterEach(async () => {
  const found = await bos.violations();
  bos.exchanges.length = 0;
  expect(found).toEqual([]);
});

describe('components', () => {
  test('row 5: PUT /v2/components creates (and replaces) the records as discovery does', async () => {
    const list = await bos.req('GET', '/v2/components');
    expect(list.body.map((c: { id: string }) => c.id)).toEqual([A, B, C]);
    expect(list.body[0]).toMatchObject({
      id: A,
      enabled: false,
      last_action: { action: 'newly_discovered', failed: false, last_updated: expect.stringMatching(NAIVE_TIME) },
    });
    const one = await bos.req('PUT', `/v2/components/${C}`, { body: { enabled: true, retry_policy: 2 } });
    expect(one.body).toMatchObject({ id: C, enabled: true, retry_policy: 2, status: { status_override: 'on_hold' } });
  });

  test('row 6: every filter, paging, one by id with every field, unknown id 404', async () => {
    await h.db.db.execute(sql`update components set enabled = true, session = 's1', phase = 'powering_on' where id = ${B}`);
    await h.db.db.execute(sql`update components set staged_session = 's2' where id = ${C}`);
    const ids = async (q: string) => (await bos.req('GET', `/v2/components${q}`)).body.map((c: { id: string }) => c.id);
    expect(await ids(`?ids=${A},${C}`)).toEqual([A, C]);
    expect(await ids('?session=s1')).toEqual([B]);
    expect(await ids('?staged_session=s2')).toEqual([C]);
    expect(await ids('?enabled=true')).toEqual([B]);
    expect(await ids('?phase=powering_on')).toEqual([B]);
    expect(await ids('?status=power_on_pending,stable')).toEqual([A, B, C]);
    expect(await ids('?status=power_on_pending')).toEqual([B]);
    expect(await ids('?page_size=2')).toEqual([A, B]);
    expect(await ids(`?page_size=2&start_after_id=${B}`)).toEqual([C]);
    expect(await ids('?page_size=0')).toEqual([A, B, C]);
    // Empty filters are not given, as in BOS (the contract does not allow an empty `ids`, so no check).
    expect((await bos.req('GET', '/v2/components?session=&ids=', { check: false })).body).toHaveLength(3);
    const one = await bos.req('GET', `/v2/components/${B}`);
    expect(Object.keys(one.body).sort()).toEqual(
      ['actual_state', 'desired_state', 'enabled', 'error', 'event_stats', 'id', 'last_action', 'session', 'staged_state', 'status'].sort(),
    );
    expect(one.body.status).toEqual({ phase: 'powering_on', status: 'power_on_pending', status_override: '' });
    const missing = await bos.req('GET', '/v2/components/x9999c0s0b0n0');
    expect(missing.body).toMatchObject({ status: 404, detail: expect.stringContaining('x9999c0s0b0n0') });
    const bad = await bos.req('GET', '/v2/components?phase=dancing', { check: false });
    expect(bad.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^phase: must be one of/) });
  });

  test('row 7: PATCH one deep-merges and answers the whole record; bad input is 400 naming the field', async () => {
    const r = await bos.req('PATCH', `/v2/components/${A}`, {
      body: { desired_state: { boot_artifacts: { kernel: 'k1', initrd: 'i1' }, configuration: 'cfg' }, enabled: false, retry_policy: 4 },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: A,
      enabled: false,
      retry_policy: 4,
      session: '',
      desired_state: {
        boot_artifacts: { kernel: 'k1', kernel_parameters: '', initrd: 'i1' },
        configuration: 'cfg',
        last_updated: expect.stringMatching(NAIVE_TIME),
      },
    });
    const more = await bos.req('PATCH', `/v2/components/${A}`, {
      body: { desired_state: { boot_artifacts: { kernel_parameters: 'quiet' } } },
    });
    expect(more.body.desired_state.boot_artifacts).toEqual({ kernel: 'k1', kernel_parameters: 'quiet', initrd: 'i1' });
    const bad = await bos.req('PATCH', `/v2/components/${A}`, { body: { retry_policy: -1 }, check: false });
    expect(bad.body).toMatchObject({ status: 400, detail: expect.stringMatching(/^retry_policy: must be at least 0/) });
    const typo = await bos.req('PATCH', `/v2/components/${A}`, { body: { enabeld: true }, check: false });
    expect(typo.body.detail).toBe('enabeld: is not a field of this object');
    expect((await bos.req('PATCH', '/v2/components/x9999c0s0b0n0', { body: { enabled: true } })).status).toBe(404);
  });

  test('row 8: PATCH many by ids or by session answers the patched records; bad filters are 400; unknown ids 404 unless skipped', async () => {
    const byIds = await bos.req('PATCH', '/v2/components', { body: { filters: { ids: `${A},${B}` }, patch: { enabled: true } } });
    expect(byIds.body.map((c: { id: string; enabled: boolean }) => [c.id, c.enabled])).toEqual([
      [A, true],
      [B, true],
    ]);
    await h.db.db.execute(sql`update components set session = 'sx' where id = ${C}`);
    const bySession = await bos.req('PATCH', '/v2/components', { body: { filters: { session: 'sx' }, patch: { error: 'stop' } } });
    expect(bySession.body).toMatchObject([{ id: C, error: 'stop' }]);
    const both = await bos.req('PATCH', '/v2/components', {
      body: { filters: { ids: A, session: 'sx' }, patch: { enabled: true } },
      check: false,
    });
    expect(both.body).toMatchObject({ status: 400, detail: 'filters: give exactly one of ids and session' });
    const unknown = await bos.req('PATCH', '/v2/components', { body: { filters: { ids: `${A},x9999c0s0b0n0` }, patch: { error: 'e' } } });
    expect(unknown.status).toBe(404);
    const skipped = await bos.req('PATCH', '/v2/components?skip_bad_ids=true', {
      body: { filters: { ids: `${A},x9999c0s0b0n0` }, patch: { error: 'e' } },
    });
    expect(skipped.body).toMatchObject([{ id: A, error: 'e' }]);
    const list = await bos.req('PATCH', '/v2/components', {
      body: [
        { id: A, error: 'one' },
        { id: B, error: 'two' },
      ],
    });
    expect(list.body.map((c: { error: string }) => c.error)).toEqual(['one', 'two']);
  });

  test('row 9: applystaged answers succeeded, failed and ignored', async () => {
    await bos.req('PUT', '/v2/sessiontemplates/t', { body: { boot_sets: { b: { path: 'p', type: 's3', node_list: [A] } } } });
    await bos.req('POST', '/v2/sessions', { body: { name: 'staged', operation: 'boot', template_name: 't', stage: true } });
    await bos.req('PATCH', `/v2/components/${A}`, {
      body: {
        staged_state: { boot_artifacts: { kernel: 'k', kernel_parameters: 'p', initrd: 'i' }, configuration: '', session: 'staged' },
      },
    });
    await bos.req('PATCH', `/v2/components/${B}`, { body: { staged_state: { session: 'gone' } } });
    const r = await bos.req('POST', '/v2/applystaged', { body: { xnames: [A, B, C] } });
    expect(r.body).toEqual({ succeeded: [A], failed: [B], ignored: [C] });
    expect((await bos.req('GET', `/v2/components/${A}`)).body).toMatchObject({
      enabled: true,
      session: 'staged',
      desired_state: { boot_artifacts: { kernel: 'k' } },
    });
  });

  test('DELETE one: 204, then 404', async () => {
    expect((await bos.req('DELETE', `/v2/components/${C}`)).status).toBe(204);
    expect((await bos.req('GET', `/v2/components/${C}`)).status).toBe(404);
    expect((await bos.req('DELETE', `/v2/components/${C}`)).status).toBe(404);
  });
});

describe('row 12: the bos-reporter PATCH', () => {
  const report = (id: string, token: string, headers?: Record<string, string>) =>
    bos.req('PATCH', `/v2/components/${id}`, { body: { id, actual_state: { bss_token: token } }, headers });

  test('maps the token to the artifacts bootorch set with it and stamps last_updated, through the batched report path', async () => {
    const before = reports.stats().reports;
    const r = await report(A, 'tok-a');
    expect(r.status).toBe(200);
    expect(r.body.actual_state).toEqual({
      boot_artifacts: { kernel: 's3://boot-images/a/kernel', kernel_parameters: 'console=ttyS0', initrd: 's3://boot-images/a/initrd' },
      bss_token: 'tok-a',
      last_updated: expect.stringMatching(NAIVE_TIME),
    });
    expect(reports.stats().reports).toBe(before + 1);
    const ev = await h.db.db.execute(sql`select kind, actor from component_events where component_id = ${A} and kind = 'report'`);
    expect(ev.rows).toEqual([{ kind: 'report', actor: 'tester' }]);
  });

  test("409 while bootorch is mid-transition (BOS's rule), allowed after a power-on; unknown xname 404 with a JSON detail", async () => {
    await h.db.db.execute(
      sql`update components set enabled = true, phase = 'powering_off', last_action = 'powering_off_gracefully' where id = ${A}`,
    );
    const refused = await report(A, 'tok-a');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({
      status: 409,
      title: 'The update was not allowed due to a conflict',
      detail: expect.stringMatching(/^Actual state can not be updated/),
    });
    await h.db.db.execute(sql`update components set phase = 'powering_on', last_action = 'powering_on' where id = ${A}`);
    expect((await report(A, 'tok-a')).status).toBe(200);
    const unknown = await report('x9999c0s0b0n0', 'tok-a');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/json/);
    expect(unknown.body.detail).toContain('x9999c0s0b0n0');
  });

  test('reports arriving together each go through the batcher and are answered on their own', async () => {
    const before = reports.stats().reports;
    const rs = await Promise.all([A, B, C].map((id) => report(id, 'tok-a')));
    expect(rs.map((r) => [r.status, r.body.id, r.body.actual_state.bss_token])).toEqual([
      [200, A, 'tok-a'],
      [200, B, 'tok-a'],
      [200, C, 'tok-a'],
    ]);
    expect(reports.stats().reports).toBe(before + 3);
  });

  test('a node credential reports for its own xname only, and may not make any other PATCH', async () => {
    const node = h.auth.bearer(await h.auth.token('node', { xname: A }));
    expect((await report(A, 'tok-a', node)).status).toBe(200);
    const other = await report(B, 'tok-a', node);
    expect(other.status).toBe(403);
    expect(other.body.detail).toMatch(/may not report for x1000c0s0b0n1/);
    expect((await bos.req('PATCH', `/v2/components/${A}`, { body: { enabled: true }, headers: node })).status).toBe(403);
    const ev = await h.db.db.execute(sql`select actor from component_events where component_id = ${A} and kind = 'report'`);
    expect(ev.rows).toEqual([{ actor: `node:${A}` }]);
  });
});
