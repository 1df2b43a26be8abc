/**
 * What the console reads, over the real API on prepared rows: a session's result for each state it
 * can be in (never "complete" for an aborted session or one with failed nodes), nodes blocked by a
 * failing outside service shown as blocked (with since when) and not as failures, the components
 * table's orders and filters keyset-paged (every row once, in order, at any page), and the machine
 * map's compact snapshot with its event-log cursor.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { startHarness, type Harness } from './api-harness.ts';
import { saveSessionStatusSnapshot } from '../../src/db/sessions/status.ts';

let h: Harness;

async function session(name: string, o: { status: string; paused?: boolean; aborted?: boolean; error?: string | null }) {
  await h.db.db.execute(sql`insert into sessions (name, operation, template_name, status, start_time, paused, aborted, error)
    values (${name}, 'reboot', 'cos', ${o.status}, now() - interval '1 hour', ${o.paused ?? false}, ${o.aborted ?? false}, ${o.error ?? null})`);
}

/** `count` nodes x<cab>c0s<g>b0n0 with these columns. */
function nodes(cab: number, count: number, cols: Record<string, string | boolean>) {
  const names = Object.keys(cols);
  const values = Object.values(cols).map((v) => sql`${v}`);
  return sql`insert into components (id, ${sql.raw(names.join(', '))})
    select format('x%sc0s%sb0n0', ${cab}::int, g), ${sql.join(values, sql`, `)} from generate_series(0, ${count - 1}) g`;
}

beforeAll(async () => {
  h = await startHarness();
  await session('pend', { status: 'pending' });
  await session('run', { status: 'running' });
  await session('pause', { status: 'running', paused: true });
  await session('aborting', { status: 'running', aborted: true });
  await session('aborted', { status: 'complete', aborted: true });
  await session('ok', { status: 'complete' });
  await session('someFailed', { status: 'complete' });
  await session('broken', { status: 'complete', error: 'No nodes were found to act upon.' });
  // someFailed: 3 done, 2 failed; ok: 2 done.
  await h.db.db.execute(nodes(2000, 3, { session: 'someFailed' }));
  await h.db.db.execute(nodes(2001, 2, { session: 'someFailed', status_override: 'failed', failure_reason: 'power_on_timeout' }));
  await h.db.db.execute(nodes(2002, 2, { session: 'ok' }));
  for (const name of ['someFailed', 'ok', 'aborted', 'broken']) await saveSessionStatusSnapshot(h.db.db, { tenantKey: '', name });

  // run: 4 nodes blocked by PCS (their first PCS error after setup), 2 held for an unreachable BMC,
  // 1 between power-on attempts, 1 failed.
  await h.db.db.execute(
    nodes(3000, 4, {
      session: 'run',
      enabled: true,
      phase: 'powering_off',
      failure_reason: 'service_unavailable',
      error: 'PCS POST /power-control/v1/transitions failed (HTTP 503): Service Unavailable',
    }),
  );
  await h.db.db.execute(sql`insert into component_events (at, component_id, session, kind, actor, error, reason)
    select t, 'x3000c0s' || g || 'b0n0', 'run', k, 'operator:status', e, r from generate_series(0, 3) g cross join lateral
    (values (timestamptz '2026-12-03 13:00:00+00', 'setup', null, null),
            (timestamptz '2026-12-03 13:50:00+00', 'error', 'PCS POST /power-control/v1/transitions failed (HTTP 503): old outage', 'service_unavailable'),
            (timestamptz '2026-12-03 13:55:00+00', 'transition', null, null),
            (timestamptz '2026-12-03 14:02:10+00' + g * interval '1 s', 'error', 'PCS POST /power-control/v1/transitions failed (HTTP 503): Service Unavailable', 'service_unavailable'),
            (timestamptz '2026-12-03 14:05:00+00', 'error', 'PCS POST /power-control/v1/transitions failed (HTTP 503): again', 'service_unavailable')) v(t, k, e, r)`);
  await h.db.db.execute(
    nodes(3001, 2, {
      session: 'run',
      enabled: true,
      phase: 'powering_on',
      status_override: 'on_hold',
      failure_reason: 'bmc_unreachable',
      error: 'BMC unreachable: connection refused',
    }),
  );
  await h.db.db.execute(sql`update components set power_unknown_since = '2026-12-03 14:01:00+00' where id like 'x3001%'`);
  await h.db.db.execute(
    nodes(3004, 1, {
      session: 'run',
      enabled: true,
      phase: 'powering_on',
      status_override: 'on_hold',
      failure_reason: 'local_resources',
      error: "local_resources: EMFILE: this process's open-file limit is reached",
    }),
  );
  await h.db.db.execute(sql`update components set power_unknown_since = '2026-12-03 14:03:00+00' where id like 'x3004%'`);
  await h.db.db.execute(
    nodes(3002, 1, { session: 'run', enabled: true, phase: 'powering_on', failure_reason: 'power_on_timeout', error: 'Node still off' }),
  );
  await h.db.db.execute(
    nodes(3003, 1, { session: 'run', status_override: 'failed', failure_reason: 'boot_never_reported', error: 'never' }),
  );
  await h.db.db.execute(sql`analyze components`);
});
afterAll(async () => {
  await h?.close();
});

describe('session results', () => {
  test('each state has its own word; aborted, failed and with-failures are never "complete"', async () => {
    const r = await h.ok('{ sessions { name result resultText extendedStatus { result } } }');
    const by = Object.fromEntries(r.sessions.map((s: { name: string; result: string }) => [s.name, s.result]));
    expect(by).toEqual({
      pend: 'PENDING',
      run: 'RUNNING',
      pause: 'PAUSED',
      aborting: 'ABORTING',
      aborted: 'ABORTED',
      ok: 'COMPLETE',
      someFailed: 'COMPLETE_WITH_FAILURES',
      broken: 'FAILED',
    });
    for (const s of r.sessions) expect(s.extendedStatus.result, s.name).toBe(s.result);
    expect(r.sessions.find((s: { name: string }) => s.name === 'pause').resultText).toContain('paused');
  });
});

describe('blocked, retrying and failed nodes of a running session', () => {
  test('blocked by PCS since its first error of this outage, by the BMC (or bootorch, out of files) since its first unknown read; not failures', async () => {
    const r = await h.ok(`{ sessionStatus(name: "run") {
      failureReasons { key count ids } retrying { key count ids }
      blocked { service reason since count ids error } } }`);
    const s = r.sessionStatus;
    expect(s.failureReasons).toEqual([{ key: 'boot_never_reported', count: 1, ids: ['x3003c0s0b0n0'] }]);
    expect(s.retrying).toEqual([{ key: 'power_on_timeout', count: 1, ids: ['x3002c0s0b0n0'] }]);
    expect(s.blocked).toEqual([
      {
        service: 'PCS',
        reason: 'service_unavailable',
        since: '2026-12-03T14:02:10.000Z',
        count: 4,
        ids: ['x3000c0s0b0n0', 'x3000c0s1b0n0', 'x3000c0s2b0n0', 'x3000c0s3b0n0'],
        error: 'PCS POST /power-control/v1/transitions failed (HTTP 503): Service Unavailable',
      },
      {
        service: 'BMC',
        reason: 'bmc_unreachable',
        since: '2026-12-03T14:01:00.000Z',
        count: 2,
        ids: ['x3001c0s0b0n0', 'x3001c0s1b0n0'],
        error: 'BMC unreachable: connection refused',
      },
      {
        service: 'bootorch',
        reason: 'local_resources',
        since: '2026-12-03T14:03:00.000Z',
        count: 1,
        ids: ['x3004c0s0b0n0'],
        error: "local_resources: EMFILE: this process's open-file limit is reached",
      },
    ]);
  });

  test('explainSession groups them as blocked by PCS, not as waiting for status evaluation', async () => {
    const r = await h.ok('{ explainSession(name: "run") { groups { waitingFor description count } } }');
    expect(r.explainSession.groups).toContainEqual({ waitingFor: 'OUTSIDE_SERVICE', description: 'blocked: PCS failing', count: 4 });
    expect(r.explainSession.groups.map((g: { waitingFor: string }) => g.waitingFor)).not.toContain('STATUS_EVALUATION');
  });
});

const TABLE = `query($f: ComponentFilter, $first: Int, $after: String, $o: ComponentOrder, $d: Boolean) {
  components(filter: $f, first: $first, after: $after, orderBy: $o, descending: $d) {
    nodes { id session failureReason updatedAt status { status phase } } pageInfo { hasNextPage endCursor } totalCount } }`;

type Row = { id: string; session: string; failureReason: string; updatedAt: string; status: { status: string; phase: string } };

async function walk(vars: Record<string, unknown>, first: number): Promise<Row[]> {
  const out: Row[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const r: any = await h.ok(TABLE, { ...vars, first, after });
    out.push(...r.components.nodes);
    if (!r.components.pageInfo.hasNextPage) return out;
    after = r.components.pageInfo.endCursor;
  }
  throw new Error('no end');
}

/** Each order's sort value of a row, as the database compares it (stored strings, timestamps as ISO text). */
const sortKey: Record<string, (r: Row) => string> = {
  STATUS: (r) => r.status.status.toLowerCase(),
  PHASE: (r) => (r.status.phase === 'NONE' ? '' : r.status.phase.toLowerCase()),
  FAILURE_REASON: (r) => r.failureReason,
  SESSION: (r) => r.session,
  LAST_CHANGE: (r) => r.updatedAt,
};

describe('the node table: orders and filters, keyset-paged', () => {
  const key = sortKey;
  test.each(Object.keys(key).flatMap((o) => [[o, false] as const, [o, true] as const]))(
    'orderBy %s (descending %s): every row once, sorted, ties on id, pages of 3',
    async (order, descending) => {
      // Ties on the sort column, so the id must break them across page ends.
      await h.db.db.execute(
        sql`update components set updated_at = case when id like 'x300%' then timestamptz '2026-12-03 14:00:00.123456+00' else '2026-12-03 13:00:00+00' end`,
      );
      const rows = await walk({ o: order, d: descending }, 3);
      const all = (await walk({}, 100)).map((r) => r.id);
      expect(rows.map((r) => r.id).sort()).toEqual([...all].sort());
      const cmp = (a: Row, b: Row) => {
        const [x, y] = [key[order]!(a), key[order]!(b)];
        const c = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
        return descending ? -c : c;
      };
      expect(rows.map((r) => r.id)).toEqual([...rows].sort(cmp).map((r) => r.id));
    },
  );

  test('filters: an xname prefix, failure reasons, status; a cursor of another order is refused', async () => {
    const prefix = await walk({ f: { idPrefix: 'x3000c0s1' } }, 10);
    expect(prefix.map((r) => r.id)).toEqual(['x3000c0s1b0n0']);
    const chassis = await walk({ f: { idPrefix: 'X3000' } }, 10);
    expect(chassis).toHaveLength(4);
    const reasons = await walk({ f: { failureReason: ['power_on_timeout', 'boot_never_reported'] }, o: 'FAILURE_REASON' }, 1);
    expect(reasons.map((r) => [r.failureReason, r.id])).toEqual([
      ['boot_never_reported', 'x3003c0s0b0n0'],
      ['power_on_timeout', 'x2001c0s0b0n0'],
      ['power_on_timeout', 'x2001c0s1b0n0'],
      ['power_on_timeout', 'x3002c0s0b0n0'],
    ]);
    const r = await h.ok(TABLE, { f: { status: ['FAILED'] }, o: 'LAST_CHANGE', first: 1 });
    expect(r.components.totalCount).toBe(3);
    const bad = await h.gql(TABLE, { o: 'STATUS', first: 1, after: r.components.pageInfo.endCursor });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    const badPrefix = await h.gql(TABLE, { f: { idPrefix: 'x1000%' }, first: 1 });
    expect(JSON.stringify(badPrefix.errors)).toContain('filter.idPrefix');
  });
});

describe('the machine map snapshot', () => {
  test('columns in id order decode to the components; the cursor is the log position it includes', async () => {
    const r = await h.ok(`{ machineMap { cursor ids status statuses phase phases session sessions failureReason failureReasons } }`);
    const m = r.machineMap;
    const rows = await walk({}, 1000);
    expect(m.ids).toEqual(rows.map((x) => x.id));
    expect(m.sessions[0]).toBe('');
    expect(m.failureReasons[0]).toBe('');
    rows.forEach((x, i) => {
      expect(m.statuses[m.status[i]], x.id).toBe(x.status.status);
      expect(m.phases[m.phase[i]], x.id).toBe(x.status.phase);
      expect(m.sessions[m.session[i]], x.id).toBe(x.session);
      expect(m.failureReasons[m.failureReason[i]], x.id).toBe(x.failureReason);
    });
    const max = Number((await h.db.pool.query('select max(id) as m from component_events')).rows[0].m);
    expect(Number(m.cursor)).toBe(max);
  });
});
