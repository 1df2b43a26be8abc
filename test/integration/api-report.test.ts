/**
 * The node reporter (reference §5): reportBootState, as the exported function the simulator calls and
 * as the mutation. Token mapping, unknown tokens, the 409 rule, NOT_FOUND, the 'report' event, the kick.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { errorOf, startHarness, type Harness } from './api-harness.ts';
import { reportBootState } from '../../src/engine/reports.ts';
import { readComponents } from '../../src/db/components/read.ts';

let h: Harness;
const ID = 'x3000c0s19b1n0';
const REPORT = `mutation($id: ID!, $t: String!) { reportBootState(id: $id, bssToken: $t) {
  __typename
  ... on BootStateReported { tokenKnown component { id actualState { bootArtifacts { kernel kernelParameters initrd } bssToken lastUpdated } } }
  ... on ReportRefused { code message } } }`;

beforeAll(async () => {
  h = await startHarness();
  await h.db.db.execute(sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values
    ('tok-a', 's3://boot-images/a/kernel', 'console=ttyS0 root=sbps-s3:a', 's3://boot-images/a/initrd'),
    ('tok-b', 's3://boot-images/b/kernel', 'quiet', 's3://boot-images/b/initrd')`);
});
afterAll(async () => {
  await h?.close();
});
beforeEach(async () => {
  h.scheduler.clear();
  await h.db.db.execute(sql`delete from components`);
  await h.db.db.execute(
    sql`insert into components (id, actual_kernel, actual_updated_at, session) values (${ID}, 'old', '2020-01-01Z', 's1')`,
  );
});

const setState = (enabled: boolean, phase: string, lastAction: string, override = '') =>
  h.db.db.execute(
    sql`update components set enabled = ${enabled}, phase = ${phase}, last_action = ${lastAction}, status_override = ${override} where id = ${ID}`,
  );

describe('the exported function', () => {
  test('a known token sets the artifacts and stamps them; appends a report event; kicks status after commit', async () => {
    const r = await reportBootState(h.db.db, h.scheduler, { id: ID, token: 'tok-a', actor: 'node:x3000c0s19b1n0' });
    expect(r).toEqual({ ok: true, id: ID, tokenKnown: true, session: 's1' });
    const [row] = await readComponents(h.db.db, [ID]);
    expect(row).toMatchObject({
      id: ID,
      actualKernel: 's3://boot-images/a/kernel',
      actualKernelParameters: 'console=ttyS0 root=sbps-s3:a',
      actualInitrd: 's3://boot-images/a/initrd',
      actualBssToken: 'tok-a',
      session: 's1',
    });
    expect(row!.actualUpdatedAt!.getTime()).toBeGreaterThan(Date.parse('2020-01-02Z'));
    expect(h.scheduler.committed).toEqual([['status']]);
    const ev = await h.db.db.execute(sql`select kind, actor, session from component_events where component_id = ${ID}`);
    expect(ev.rows).toEqual([{ kind: 'report', actor: 'node:x3000c0s19b1n0', session: 's1' }]);
  });

  test('an unknown token keeps the old artifacts and does not refresh their timestamp', async () => {
    const r = await reportBootState(h.db.db, h.scheduler, { id: ID, token: 'tok-unknown', actor: 'node' });
    expect(r).toEqual({ ok: true, id: ID, tokenKnown: false, session: 's1' });
    expect((await readComponents(h.db.db, [ID]))[0]).toMatchObject({
      actualKernel: 'old',
      actualBssToken: 'tok-unknown',
      actualUpdatedAt: new Date('2020-01-01Z'),
    });
  });

  test('canonicalises the id; unknown or malformed ids are NOT_FOUND', async () => {
    expect(await reportBootState(h.db.db, h.scheduler, { id: 'X3000C0S19B1N0', token: 'tok-b', actor: 'n' })).toMatchObject({ ok: true });
    expect(await reportBootState(h.db.db, h.scheduler, { id: 'x3000c0s19b1n1', token: 'tok-b', actor: 'n' })).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
    });
    expect(await reportBootState(h.db.db, h.scheduler, { id: 'garbage', token: 'tok-b', actor: 'n' })).toMatchObject({
      ok: false,
      code: 'NOT_FOUND',
    });
  });

  test.each<[boolean, string, string, string, boolean]>([
    [true, 'powering_off', 'powering_off_gracefully', '', true],
    [true, 'powering_on', 'session_setup', '', true],
    [true, '', 'session_setup', 'on_hold', true],
    [true, 'powering_on', 'powering_on', '', false],
    [true, 'configuring', 'powering_on', '', false],
    [true, '', 'session_setup', '', false],
    [false, 'powering_off', 'powering_off_forcefully', '', false],
  ])('409 rule: enabled=%s phase=%s last_action=%s override=%s -> refused=%s', async (enabled, phase, action, override, refused) => {
    await setState(enabled, phase, action, override);
    const r = await reportBootState(h.db.db, h.scheduler, { id: ID, token: 'tok-a', actor: 'n' });
    expect(r.ok).toBe(!refused);
    if (!r.ok) expect(r.code).toBe('CONFLICT');
    const row = await h.db.db.execute(sql`select actual_bss_token from components where id = ${ID}`);
    expect(row.rows[0]).toEqual({ actual_bss_token: refused ? '' : 'tok-a' });
    expect(h.scheduler.committed).toEqual(refused ? [] : [['status']]);
  });
});

describe('the mutation', () => {
  test('answers with the component, or a refusal as data', async () => {
    const node = h.auth.bearer(await h.auth.token('node', { xname: ID }));
    const ok = await h.ok(REPORT, { id: ID, t: 'tok-b' }, node);
    const reporter = await h.db.db.execute(sql`select actor from component_events where kind = 'report' order by id desc limit 1`);
    expect(reporter.rows).toEqual([{ actor: `node:${ID}` }]);
    expect(ok.reportBootState).toMatchObject({
      __typename: 'BootStateReported',
      tokenKnown: true,
      component: { id: ID, actualState: { bssToken: 'tok-b', bootArtifacts: { kernel: 's3://boot-images/b/kernel' } } },
    });
    await setState(true, 'powering_off', 'powering_off_gracefully');
    const conflict = await h.ok(REPORT, { id: ID, t: 'tok-a' });
    expect(conflict.reportBootState).toMatchObject({
      __typename: 'ReportRefused',
      code: 'CONFLICT',
      message: expect.stringMatching(/can not be updated/),
    });
    const missing = await h.ok(REPORT, { id: 'x1c0s0b0n0', t: 'tok-a' });
    expect(missing.reportBootState).toMatchObject({ __typename: 'ReportRefused', code: 'NOT_FOUND' });
    expect(errorOf(await h.gql(REPORT, { id: ID, t: '' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'bssToken' });
    // Refusals write nothing: the last report event is still the accepted one.
    const last = await h.db.db.execute(sql`select actor from component_events where kind = 'report' order by id desc limit 1`);
    expect(last.rows).toEqual([{ actor: `node:${ID}` }]);
  });
});
