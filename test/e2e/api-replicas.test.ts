/**
 * Two API replicas share the nodes' reports (not timed): the same reboot over the real path
 * (bench/real-path.ts: `bootorch sim`, `api` and `worker` processes, node tokens) once with one API
 * process and once with two, the simulator's nodes spread over both URLs. With two, both replicas
 * take reports, no report is lost (every node reported, every report the simulator counts as
 * delivered is one event) or doubled (one event per delivered report), and the session ends with
 * the same rows as with one.
 */
import { afterAll, expect, test } from 'vitest';
import pg from 'pg';
import { runRealPath, type RealPathStack } from '../../bench/real-path.ts';

const NODES = 200;
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Seen {
  rows: unknown[];
  events: number;
  perNode: number[];
  delivered: number;
  acceptedByReplica: number[];
}

async function look(s: RealPathStack): Promise<Seen> {
  const rows = (
    await s.conn.pool.query(`select id, status, phase, enabled, error, last_action, actual_kernel, actual_kernel_parameters = desired_kernel_parameters as params_match,
    actual_bss_token = desired_bss_token as token_match from components order by id`)
  ).rows;
  const perNode = (
    await s.conn.pool.query(`select count(*)::int as n from component_events where kind = 'report' group by component_id`)
  ).rows.map((r) => r.n as number);
  const counters = (await (await fetch(`${s.simUrl}/sim/counters`)).json()) as { reports: { delivered: number } };
  const acceptedByReplica = await Promise.all(
    s.apiUrls.map(async (u) => {
      const text = await (await fetch(new URL('/metrics', u), { headers: { authorization: `Bearer ${s.adminToken}` } })).text();
      const lines = text.split('\n').filter((l) => l.startsWith('bootorch_reports_total{') && l.includes('outcome="accepted"'));
      if (!lines.length) throw new Error(`no accepted reports counted in /metrics:\n${text.slice(0, 2000)}`);
      return lines.reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    }),
  );
  return { rows, events: perNode.reduce((a, b) => a + b, 0), perNode, delivered: counters.reports.delivered, acceptedByReplica };
}

afterAll(async () => {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  for (const r of [1, 2]) await c.query(`drop database if exists bootorch_bench_real_${NODES}_${r}_test with (force)`);
  await c.end();
});

test(`a ${NODES}-node reboot with the reports spread over two API replicas: none lost or doubled, the same result as with one`, async () => {
  let one!: Seen;
  let two!: Seen;
  const a = await runRealPath(adminUrl, NODES, {
    replicas: 1,
    tag: '_test',
    inspect: async (s) => {
      one = await look(s);
    },
  });
  const b = await runRealPath(adminUrl, NODES, {
    replicas: 2,
    tag: '_test',
    inspect: async (s) => {
      two = await look(s);
    },
  });
  for (const [r, seen] of [
    [a, one],
    [b, two],
  ] as const) {
    expect(r.stable).toBe(NODES);
    expect(r.reported).toBe(NODES); // none lost
    expect(seen.perNode).toHaveLength(NODES);
    expect(seen.events).toBe(seen.delivered); // one event per delivered report: none doubled
    expect(seen.acceptedByReplica.reduce((x, y) => x + y, 0)).toBe(seen.events);
  }
  expect(two.acceptedByReplica).toHaveLength(2);
  for (const n of two.acceptedByReplica) expect(n).toBeGreaterThan(NODES / 4); // both replicas took their share
  expect(two.rows).toEqual(one.rows);
}, 600_000);
