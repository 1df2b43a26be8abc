/**
 * What an on-call engineer's Prometheus sees, from real processes: `bootorch sim`, `bootorch api` and
 * `bootorch worker` (BOOTORCH_ADAPTERS=http) on one database, each scraped at its own /metrics, while
 * a reboot runs into a PCS outage and then recovers. PCS's error counter must climb at the worker's
 * port, the age of the oldest pending work must grow past the walk's timeout, the simulator must have
 * answered 503s, the engine must count its ticks, actions and jobs, the API must count the subscription it streams to and, after recovery, the node
 * reports; every role exports its process metrics under its own role.
 *
 * With BOOTORCH_PROMETHEUS_TESTS=1, a real Prometheus (Debian's `prometheus`, on a free port, with
 * its own data folder, started and stopped by PID) scrapes the three processes every second with the
 * repository's alert rules (their `for:` shortened to 5 s, nothing else changed): BootorchServiceFailing
 * for pcs and BootorchWorkStuck must fire during the outage; with the worker stopped afterwards, the
 * API replica (scraped with a viewer credential) still serves the engine gauge and BootorchEngineDown
 * must fire; `promtool check rules` must pass.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { ROOT } from '../helpers/processes.ts';
import { samples, scrape, value } from '../helpers/metrics.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { freePort, gql, startStack, waitFor, type Stack } from '../faults/stack.ts';

const NODES = 24;
const PROMETHEUS = process.env.BOOTORCH_PROMETHEUS_TESTS === '1';
const RULES = path.join(ROOT, 'observability/prometheus/alerts.yml');
/** The walk's timeout (bootorch_work_timeout_seconds) is the three waits: 3 + 3 + 6 = 12 s. */
const OPTIONS = {
  polling_frequency: 1,
  transit_polling_frequency: 0.5,
  discovery_frequency: 2,
  cleanup_completed_session_ttl: '0',
  max_power_off_wait_time: 3,
  max_power_on_wait_time: 3,
  max_boot_wait_time: 6,
  default_retry_policy: 1000,
};

let db: TestDb;
let stack: Stack;
let admin: string;
let workerMetrics: string;
let prometheus: { proc: ChildProcess; url: string; dir: string } | undefined;
let firedDuringOutage: string[] = [];
let ws: Client | undefined;

const pendingAge = (text: string) =>
  Math.max(
    0,
    ...samples(text, 'bootorch_work_oldest_pending_seconds')
      .filter((s) => !['queued', 'none'].includes(s.labels.status!))
      .map((s) => s.value),
  );

async function startPrometheus(targets: { job: string; target: string; token?: string }[]): Promise<typeof prometheus> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bootorch-prometheus-'));
  const rules = parse(readFileSync(RULES, 'utf8'));
  for (const g of rules.groups) for (const r of g.rules) r.for = '5s';
  writeFileSync(path.join(dir, 'alerts.yml'), stringify(rules));
  writeFileSync(
    path.join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ['alerts.yml'],
      // The API's /metrics wants a credential (viewer or above), as prometheus.example.yml gives it.
      scrape_configs: targets.map((t) => ({
        job_name: t.job,
        static_configs: [{ targets: [t.target] }],
        ...(t.token ? { authorization: { type: 'Bearer', credentials: t.token } } : {}),
      })),
    }),
  );
  const port = await freePort();
  const proc = spawn(
    'prometheus',
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  proc.stderr!.on('data', (d) => {
    log = (log + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200,
    'Prometheus ready',
    30_000,
    () => log,
  );
  return { proc, url, dir };
}

async function firingAlerts(url: string): Promise<string[]> {
  const r = (await (await fetch(`${url}/api/v1/alerts`)).json()) as {
    data: { alerts: { labels: Record<string, string>; state: string }[] };
  };
  return r.data.alerts
    .filter((a) => a.state === 'firing')
    .map((a) => `${a.labels.alertname}${a.labels.service ? `{${a.labels.service}}` : ''}`);
}

describe('metrics of every role during a reboot with PCS down', () => {
  beforeAll(async () => {
    db = await freshDb();
    await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(OPTIONS)]);
    admin = (await createApiToken(db.db, { role: 'admin', subject: 'observability-tests' })).token;
    const workerPort = await freePort();
    stack = await startStack({
      databaseUrl: db.url,
      nodes: NODES,
      timing: 'fast',
      env: { WORKER_HEALTH_PORT: String(workerPort), LOG_LEVEL: 'info' },
    });
    workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
    await waitFor(
      async () => Number((await db.pool.query('select count(*) from components')).rows[0].count) === NODES,
      `${NODES} components discovered`,
      120_000,
      stack.logs,
    );
    await stack.mintNodeTokens();
    if (PROMETHEUS) {
      const host = (u: string) => new URL(u).host;
      prometheus = await startPrometheus([
        {
          job: 'bootorch-api',
          target: host(stack.apiUrls[0]!),
          token: (await createApiToken(db.db, { role: 'viewer', subject: 'prometheus' })).token,
        },
        { job: 'bootorch-worker', target: host(workerMetrics) },
        { job: 'bootorch-sim', target: host(stack.simUrl) },
      ]);
    }
  }, 240_000);

  afterAll(async () => {
    await ws?.dispose();
    if (prometheus) {
      const p = prometheus.proc;
      if (p.exitCode === null)
        await new Promise((resolve) => {
          p.once('exit', resolve);
          p.kill('SIGTERM');
        });
      rmSync(prometheus.dir, { recursive: true, force: true });
    }
    await stack?.stop();
    await db?.drop();
  });

  test('PCS errors and the stuck-work age climb while PCS is down; the work completes and reports count once it is back', async () => {
    const api = stack.apiUrls[0]!;
    const apiMetrics = api.replace(/\/graphql$/, '/metrics');
    const simMetrics = `${stack.simUrl}/metrics`;
    await gql(
      api,
      admin,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "half", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: stack.simEnv.SIM_IMAGE, type: 's3', nodeGroups: ['compute-a'] }] },
    );
    // One live subscriber on the API for the whole reboot.
    let delivered = 0;
    ws = createClient({
      url: api.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${admin}` },
    });
    ws.subscribe(
      { query: 'subscription { componentEvents(filter: { session: "outage" }) { cursor } }' },
      {
        next: () => {
          delivered++;
        },
        error: () => {},
        complete: () => {},
      },
    );
    await waitFor(
      async () =>
        value(await scrape(apiMetrics, { authorization: `Bearer ${admin}` }), 'bootorch_live_subscribers', {
          stream: 'componentEvents',
        }) === 1,
      'the API counts its subscriber',
      20_000,
    );

    const before = await scrape(workerMetrics);
    const pcsErrors = (t: string) => value(t, 'bootorch_outside_calls_total', { service: 'pcs', outcome: 'error' });
    await stack.simFaults({ services: { pcs: { down: true } } });
    await gql(
      api,
      admin,
      'mutation { createSession(input: { operation: REBOOT, templateName: "half", name: "outage" }) { session { name } } }',
    );

    // The worker's PCS error counter climbs; nodes wait in power-off with attempts failing for service_unavailable.
    let during = '';
    await waitFor(
      async () => {
        during = await scrape(workerMetrics);
        return pcsErrors(during) > pcsErrors(before) + 3;
      },
      'PCS errors counted at the worker',
      60_000,
      () =>
        during
          .split('\n')
          .filter((l) => l.startsWith('bootorch_outside'))
          .join('\n'),
    );
    expect(value(during, 'bootorch_sessions', { status: 'running' })).toBe(1);
    const inFlight = samples(during, 'bootorch_components').filter((x) => x.labels.status !== 'disabled' && x.labels.status !== 'stable');
    expect(
      inFlight.reduce((n, x) => n + x.value, 0),
      JSON.stringify(inFlight),
    ).toBeGreaterThan(0);
    expect(value(during, 'bootorch_outside_call_duration_seconds_count', { service: 'pcs', outcome: 'error' })).toBe(pcsErrors(during));
    // The stuck-work age grows past the walk's timeout while PCS stays down.
    const timeout = value(during, 'bootorch_work_timeout_seconds');
    expect(timeout).toBe(12);
    const age1 = pendingAge(during);
    let last = '';
    const stuck = await waitFor(
      async () => {
        last = await scrape(workerMetrics);
        return pendingAge(last) > timeout + 1 ? last : undefined;
      },
      'pending work older than its timeout',
      60_000,
      () =>
        last
          .split('\n')
          .filter((l) => /^bootorch_(work|components)/.test(l))
          .join('\n'),
    );
    expect(pendingAge(stuck)).toBeGreaterThan(age1);
    if (prometheus) {
      const url = prometheus.url;
      let seen: string[] = [];
      await waitFor(
        async () => {
          seen = await firingAlerts(url);
          return seen.includes('BootorchServiceFailing{pcs}') && seen.includes('BootorchWorkStuck');
        },
        'BootorchServiceFailing{pcs} and BootorchWorkStuck firing in Prometheus',
        90_000,
        () => `firing: ${seen.join(', ')}`,
      );
      firedDuringOutage = seen;
    }
    // The simulator answered PCS with 503s; its own series say so.
    const sim = await scrape(simMetrics);
    expect(value(sim, 'bootorch_sim_requests_total', { service: 'pcs', code: '503' })).toBeGreaterThan(0);

    await stack.simFaults({ services: { pcs: { down: false } } });
    await waitFor(
      async () => (await db.pool.query(`select status from sessions where name = 'outage'`)).rows[0]?.status === 'complete',
      'session complete once PCS is back',
      120_000,
      stack.logs,
    );
    let after = '';
    await waitFor(
      async () => {
        after = await scrape(workerMetrics);
        return pendingAge(after) === 0 && value(after, 'bootorch_sessions', { status: 'complete' }) === 1;
      },
      'no pending work left',
      30_000,
      () =>
        after
          .split('\n')
          .filter((l) => l.startsWith('bootorch_work') || l.startsWith('bootorch_sessions'))
          .join('\n'),
    );
    expect(value(after, 'bootorch_outside_calls_total', { service: 'pcs', outcome: 'ok' })).toBeGreaterThan(
      value(during, 'bootorch_outside_calls_total', { service: 'pcs', outcome: 'ok' }),
    );
    expect(value(after, 'bootorch_actions_succeeded_total', { action: 'powering_on' })).toBeGreaterThan(0);
    expect(value(after, 'bootorch_actions_started_total', { action: 'powering_off_gracefully' })).toBeGreaterThan(0);
    expect(value(after, 'bootorch_operator_ticks_total', { operator: 'status', outcome: 'ok' })).toBeGreaterThan(0);
    expect(value(after, 'bootorch_queue_jobs_started_total', { queue: 'bootorch-op-status' })).toBeGreaterThan(0);
    const apiText = await scrape(apiMetrics, { authorization: `Bearer ${admin}` });
    expect(value(apiText, 'bootorch_reports_total', { outcome: 'accepted' })).toBeGreaterThan(0);
    expect(value(apiText, 'bootorch_live_deliveries_total', { stream: 'componentEvents' })).toBeGreaterThan(0);
    expect(delivered).toBeGreaterThan(0);
    expect(value(apiText, 'bootorch_api_operations_total', { type: 'mutation', field: 'createSession', outcome: 'ok' })).toBe(1);
    // The logs tell the story in a few lines: PCS failing once and recovering once (not a line per
    // call), the session's end with its counts, no line per node at info; the API's audit of people's
    // mutations stays, node reports do not flood it.
    const lines = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });
    const workerLog = lines(stack.worker.output());
    expect(workerLog.filter((l) => l.msg.startsWith('pcs is failing')).length, stack.worker.output().slice(-3000)).toBe(1);
    const recovered = workerLog.filter((l) => l.msg.startsWith('pcs recovered'));
    expect(recovered.length).toBe(1);
    expect(recovered[0]!.failedCalls).toBeGreaterThan(3);
    const ended = workerLog.filter((l) => l.msg.startsWith('session ended'));
    expect(ended).toEqual([
      expect.objectContaining({ session: 'outage', result: 'complete', nodes: NODES / 2, succeeded: NODES / 2, failed: 0 }),
    ]);
    const apiLog = lines(stack.apis[0]!.output());
    expect(apiLog.filter((l) => l.level <= 30 && String(l.msg).includes('reportBootState'))).toEqual([]);
    expect(apiLog.filter((l) => String(l.msg).startsWith('mutation createSession')).length).toBe(1);
    expect(workerLog.length + apiLog.length).toBeLessThan(200);
    // Each process exports its own runtime series under its role.
    for (const [text, role] of [
      [after, 'worker'],
      [apiText, 'api'],
      [await scrape(simMetrics), 'sim'],
    ] as const) {
      expect(
        samples(text, 'process_cpu_user_seconds_total').map((s) => s.labels.role),
        role,
      ).toEqual([role]);
      expect(value(text, 'nodejs_eventloop_lag_p99_seconds'), role).toBeGreaterThan(0);
    }
  }, 400_000);

  test.runIf(PROMETHEUS)(
    'with the worker stopped, the API replica serves the engine gauge and BootorchEngineDown fires',
    async () => {
      const url = prometheus!.url;
      const up = async () =>
        (
          (await (await fetch(`${url}/api/v1/query?query=up`)).json()) as {
            data: { result: { metric: { job: string }; value: [number, string] }[] };
          }
        ).data.result;
      // Every role scraped, the API with its credential (a 401 would be up 0 and no database-wide gauge from it).
      expect(Object.fromEntries((await up()).map((r) => [r.metric.job, r.value[1]]))).toEqual({
        'bootorch-api': '1',
        'bootorch-worker': '1',
        'bootorch-sim': '1',
      });
      expect(await firingAlerts(url)).not.toContain('BootorchEngineDown');
      await stack.worker.stop();
      let seen: string[] = [];
      // The heartbeat ages out within 15 s of the last beat; the rule's for: is 5 s here.
      await waitFor(
        async () => {
          seen = await firingAlerts(url);
          return seen.includes('BootorchEngineDown');
        },
        'BootorchEngineDown firing in Prometheus with no worker',
        60_000,
        () => `firing: ${seen.join(', ')}`,
      );
    },
    90_000,
  );

  test.runIf(PROMETHEUS)('Prometheus fired the expected alerts during the outage; promtool accepts the rules', () => {
    expect(firedDuringOutage).toEqual(expect.arrayContaining(['BootorchServiceFailing{pcs}', 'BootorchWorkStuck']));
    const check = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    // Every rule of the file, as promtool counted them.
    const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: unknown[] }[] }).groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThanOrEqual(6);
    expect(check.stdout).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
  });
});
