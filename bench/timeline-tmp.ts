import { runRealPath } from './real-path.ts';
const n = Number(process.env.NODES ?? 1000);
const r = await runRealPath(process.env.DATABASE_URL!, n, {
  workerEnv: process.env.CHANGED_PASSES ? { BOOTORCH_STATUS_CHANGED_PASSES: process.env.CHANGED_PASSES } : undefined,
  async inspect({ conn, apiUrls, adminToken, simUrl }) {
    const m = await (await fetch(apiUrls[0]!.replace('/graphql', '/metrics'), { headers: { authorization: `Bearer ${adminToken}` } })).text();
    console.log(m.split('\n').filter((l) => /^bootorch_report_duration|^bootorch_report_batch|^bootorch_http|nodejs_eventloop_lag_p99|process_cpu_seconds_total/.test(l)).join('\n'));
    const sm = await (await fetch(`${simUrl}/metrics`)).text();
    console.log(sm.split('\n').filter((l) => /^bootorch_sim_requests_total|nodejs_eventloop_lag_p99/.test(l)).join('\n'));
    const t0 = (await conn.pool.query(`select min(at) as t from component_events where kind <> 'setup' and at > now() - interval '10 minutes' and session = 'bench'`)).rows[0].t;
    const rows = (
      await conn.pool.query(
        `select kind, coalesce(to_status,'') as to_status, coalesce(reason,'') as reason, count(*)::int n,
        round(extract(epoch from min(at) - $1)::numeric, 2) as first, round(extract(epoch from max(at) - $1)::numeric, 2) as last
        from component_events where at >= $1 group by 1,2,3 order by min(at)`,
        [t0],
      )
    ).rows;
    for (const x of rows) console.log(`${x.kind.padEnd(10)} ${x.to_status.padEnd(20)} ${String(x.n).padStart(6)}  ${x.first} .. ${x.last}  ${x.reason.slice(0, 50)}`);
    const sec = (
      await conn.pool.query(
        `select floor(extract(epoch from at - $1))::int s, count(*) filter (where kind='report')::int reports, count(*)::int events from component_events where at >= $1 group by 1 order by 1`,
        [t0],
      )
    ).rows;
    console.log(sec.map((x) => `${x.s}s:${x.reports}/${x.events}`).join(' '));
  },
});
console.log(JSON.stringify(r));
process.exit(0);
