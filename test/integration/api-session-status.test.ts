/**
 * Session extended status (reference §2.2) on prepared component sets: percentages (2 decimals, N=0),
 * phases, error summary truncated at 10 with `...`, failure reasons, timing, snapshots, tenancy.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';
import { computeSessionStatus, saveSessionStatusSnapshot } from '../../src/db/sessions/status.ts';

let h: Harness;
const NOW = new Date('2026-03-01T12:00:00Z');
const STATUS = `query($n: String!) { sessionStatus(name: $n) {
  name status managedComponentsCount percentSuccessful percentFailed percentStaged
  phases { percentComplete percentPoweringOn percentPoweringOff percentConfiguring }
  errorSummary { key count ids list } failureReasons { key count ids list }
  timing { startTime endTime duration } paused pauseReason savedAt } }`;

/** A session started this long ago by the database's clock (the one a live session's duration runs to). */
async function session(name: string, status: string, startAgoSeconds: number) {
  await h.db.db.execute(sql`insert into sessions (name, operation, template_name, status, start_time, paused, pause_reason)
    values (${name}, 'reboot', 'cos', ${status}, now() - make_interval(secs => ${startAgoSeconds}), ${name === 'st'}, ${name === 'st' ? 'failure budget spent' : null})`);
}
const startOf = async (name: string) =>
  new Date(
    (await h.db.db.execute<{ t: string }>(sql`select start_time::text as t from sessions where name = ${name}`)).rows[0]!.t,
  ).toISOString();

/** count components of one kind, in session `name`, numbered from `from` in cabinet `cab`. */
function comps(
  cab: number,
  from: number,
  count: number,
  cols: {
    session?: string;
    tenant?: string;
    staged?: string;
    enabled?: boolean;
    phase?: string;
    override?: string;
    error?: string;
    reason?: string;
  },
) {
  return sql`insert into components (id, session, session_tenant, staged_session, enabled, phase, status_override, error, failure_reason)
    select format('x%sc0s%sb0n0', ${cab}::int, g), ${cols.session ?? ''}, ${cols.tenant ?? ''}, ${cols.staged ?? ''}, ${cols.enabled ?? false},
      ${cols.phase ?? ''}, ${cols.override ?? ''}, ${cols.error ?? ''}, ${cols.reason ?? ''}
    from generate_series(${from}::int, ${from + count - 1}::int) g`;
}

beforeAll(async () => {
  h = await startHarness();
  await session('st', 'running', 93_784); // 1 day, 2:03:04 ago
  const parts = [
    comps(1000, 0, 3, { session: 'st' }), // stable (done)
    comps(1000, 3, 2, { session: 'st', override: 'failed', error: 'boom', reason: 'power_on_timeout' }),
    comps(1000, 5, 2, { session: 'st', enabled: true, phase: 'powering_on', error: 'boom' }),
    comps(1000, 7, 1, { session: 'st', enabled: true, phase: 'powering_on', override: 'on_hold', error: 'boom' }),
    comps(1000, 8, 1, { session: 'st', enabled: true, phase: 'powering_off', error: 'boom' }),
    comps(1000, 9, 1, { session: 'st', enabled: true, phase: 'configuring', error: 'boom' }),
    comps(1000, 10, 2, { session: 'st', phase: 'powering_on', error: 'boom', reason: 'boot_never_reported' }), // disabled: no phase share
    comps(1000, 12, 3, { session: 'st', phase: 'powering_on', error: 'boom' }),
    comps(1000, 15, 1, { session: 'st', error: 'other' }),
    comps(1001, 0, 4, { staged: 'st' }),
    comps(1002, 0, 5, { session: 'st', tenant: 'tenant-b', override: 'failed' }), // another tenant's "st"
  ];
  for (const p of parts) await h.db.db.execute(p);
  await session('empty', 'running', 20);
});
afterAll(async () => {
  await h?.close();
});

describe('computed live', () => {
  test('percentages of N = owned + staged, rounded to 2 decimals; phases count enabled, not on hold', async () => {
    const s = (await h.ok(STATUS, { n: 'st' })).sessionStatus;
    // C = 16 owned, S = 4 staged, N = 20; stable: 3 + 1 ("other") = 4 ... every disabled phase-'' row is stable.
    expect(s).toMatchObject({
      name: 'st',
      status: 'RUNNING',
      managedComponentsCount: 20,
      percentSuccessful: 20,
      percentFailed: 10,
      percentStaged: 20,
      phases: { percentComplete: 30, percentPoweringOn: 10, percentPoweringOff: 5, percentConfiguring: 5 },
      // The seconds the test itself took run on.
      timing: { startTime: await startOf('st'), endTime: null, duration: expect.stringMatching(/^1 day, 2:03:0\d$/) },
      paused: true,
      pauseReason: 'failure budget spent',
      savedAt: null,
    });
  });

  test('error summary: grouped by text, largest first, 10 ids then "..."', async () => {
    const s = (await h.ok(STATUS, { n: 'st' })).sessionStatus;
    expect(s.errorSummary).toHaveLength(2);
    const [boom, other] = s.errorSummary;
    expect(boom.key).toBe('boom');
    expect(boom.count).toBe(12);
    expect(boom.ids).toHaveLength(10);
    expect(boom.ids).toEqual([...boom.ids].sort());
    expect(boom.list).toBe(`${boom.ids.join(',')}...`);
    expect(other).toEqual({ key: 'other', count: 1, ids: ['x1000c0s15b0n0'], list: 'x1000c0s15b0n0' });
    expect(s.failureReasons).toEqual(
      [
        { key: 'power_on_timeout', count: 2, ids: ['x1000c0s3b0n0', 'x1000c0s4b0n0'], list: 'x1000c0s3b0n0,x1000c0s4b0n0' },
        { key: 'boot_never_reported', count: 2, ids: ['x1000c0s10b0n0', 'x1000c0s11b0n0'], list: 'x1000c0s10b0n0,x1000c0s11b0n0' },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
  });

  test('N = 0 gives zeros; an unknown session is null; Session.extendedStatus is the same', async () => {
    const s = (await h.ok(STATUS, { n: 'empty' })).sessionStatus;
    expect(s).toMatchObject({
      managedComponentsCount: 0,
      percentSuccessful: 0,
      percentFailed: 0,
      percentStaged: 0,
      phases: { percentComplete: 0, percentPoweringOn: 0 },
      errorSummary: [],
      failureReasons: [],
      timing: { duration: expect.stringMatching(/^0:00:[23]\d$/) },
    });
    expect((await h.ok(STATUS, { n: 'nope' })).sessionStatus).toBeNull();
    const viaSession = await h.ok(`{ session(name: "st") { extendedStatus { managedComponentsCount percentFailed } } }`);
    expect(viaSession.session.extendedStatus).toEqual({ managedComponentsCount: 20, percentFailed: 10 });
  });

  test('a tenant session counts its own components (and staged ones of its tenant)', async () => {
    await h.db.db.execute(
      sql`insert into sessions (tenant_key, tenant, name, operation, template_name, status) values ('tenant-b', 'tenant-b', 'st', 'boot', 'cos', 'running')`,
    );
    await h.db.db.execute(sql`insert into tenant_xnames (tenant, xname) values ('tenant-b', 'x1001c0s0b0n0')`);
    const s = await computeSessionStatus(h.db.db, { tenantKey: 'tenant-b', name: 'st' }, NOW);
    expect(s).toMatchObject({ managedComponentsCount: 6, percentFailed: 83.33, percentStaged: 16.67 });
  });
});

describe('snapshots', () => {
  test('a complete session shows its saved snapshot; a live one is computed', async () => {
    await session('done', 'complete', 600);
    await h.db.db.execute(sql`update sessions set end_time = start_time + interval '300 seconds' where name = 'done'`);
    await h.db.db.execute(comps(1003, 0, 2, { session: 'done' }));
    const saved = await saveSessionStatusSnapshot(h.db.db, { tenantKey: '', name: 'done' }, NOW);
    expect(saved).toMatchObject({
      managedComponentsCount: 2,
      percentSuccessful: 100,
      timing: { duration: '0:05:00' },
      savedAt: NOW.toISOString(),
    });
    await h.db.db.execute(sql`update components set status_override = 'failed' where session = 'done'`);
    const shown = (await h.ok(STATUS, { n: 'done' })).sessionStatus;
    expect(shown).toMatchObject({ percentSuccessful: 100, percentFailed: 0, savedAt: NOW.toISOString() });
    // Re-saving replaces it.
    await saveSessionStatusSnapshot(h.db.db, { tenantKey: '', name: 'done' }, NOW);
    expect((await h.ok(STATUS, { n: 'done' })).sessionStatus.percentFailed).toBe(100);
    // A running session with a stale snapshot is still computed live.
    await saveSessionStatusSnapshot(h.db.db, { tenantKey: '', name: 'empty' }, NOW);
    expect((await h.ok(STATUS, { n: 'empty' })).sessionStatus.savedAt).toBeNull();
    expect(await saveSessionStatusSnapshot(h.db.db, { tenantKey: '', name: 'nope' }, NOW)).toBeNull();
  });

  test('set-based: 20,000 components aggregate quickly', async () => {
    await session('big', 'running', 60);
    await h.db.db.execute(sql`insert into components (id, session, enabled, phase, error)
      select format('x%sc%ss%sb0n%s', 2000 + g / 128, (g / 16) % 8, (g / 2) % 8, g % 2), 'big', g % 3 = 0,
        case when g % 3 = 0 then 'powering_on' else '' end, case when g % 5 = 0 then 'err ' || (g % 4) else '' end
      from generate_series(0, 19999) g`);
    const t = performance.now();
    const s = await computeSessionStatus(h.db.db, { tenantKey: '', name: 'big' }, NOW);
    expect(performance.now() - t).toBeLessThan(2000);
    expect(s!.managedComponentsCount).toBe(20_000);
    expect(s!.errorSummary.map((g) => g.count)).toEqual([1000, 1000, 1000, 1000]);
    expect(s!.phases.percentPoweringOn).toBe(33.34);
  });
});
