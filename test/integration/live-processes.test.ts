/**
 * Subscriptions across processes: two API processes and one worker (in-process simulated cluster) on
 * one database. A reboot is started through API A and watched through API B. One subscriber stays
 * connected; another disconnects in the middle and resumes from its cursor; both must receive every
 * event of the session exactly once, in log order. Prints the lag from the worker's write to the
 * arrival at the subscriber on B.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { FAST_OPTIONS } from '../helpers/cluster.ts';
import { collect, wsClient, EVENT_FIELDS } from '../helpers/live.ts';
import { percentile, startRole, type RoleProcess } from '../helpers/processes.ts';
import { devAdminHeaders, devAuthEnv } from '../helpers/auth.ts';
import { SimWorld } from '../../src/sim/world.ts';

const NODES = 64;
let db: TestDb;
let worker: RoleProcess;
let apiA: RoleProcess;
let apiB: RoleProcess;
let urlA: string;
let urlB: string;

beforeAll(async () => {
  db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(FAST_OPTIONS)]);
  const env = { DATABASE_URL: db.url, SIM_NODES: String(NODES), SIM_SEED: '1', BOOTORCH_ADAPTERS: 'sim', PORT: '0', ...devAuthEnv() };
  // One after the other: three first starts at once on a fresh database can deadlock in pg-boss's
  // queue creation (seen here: "deadlock detected" from one of them).
  apiA = startRole('api', env);
  urlA = (await apiA.waitFor(/bootorch api: (\S+)/))[1]!;
  apiB = startRole('api', env);
  urlB = (await apiB.waitFor(/bootorch api: (\S+)/))[1]!;
  worker = startRole('worker', env);
});

afterAll(async () => {
  await Promise.all([apiA?.stop(), apiB?.stop(), worker?.stop()]);
  await db?.drop();
});

async function gql(url: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...devAdminHeaders() },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const EVENTS = `subscription($f: ComponentEventFilter, $after: ID) { componentEvents(filter: $f, after: $after) { ${EVENT_FIELDS} } }`;
const PROGRESS = `subscription($n: String!) { sessionProgress(name: $n) { status percentSuccessful phases { percentComplete } } }`;

describe('live across processes', () => {
  test('a reboot started through API A, watched through API B: every event exactly once, in order', async () => {
    const ws = (u: string) => u.replace(/^http/, 'ws');
    // The worker's discovery creates the components from its simulated inventory; read it from the log.
    const watcher = wsClient(ws(urlB), devAdminHeaders());
    const discovered = collect(watcher, EVENTS, { f: { kinds: ['action'] }, after: '0' });
    await discovered.until((i) => i.filter((e) => e.action === 'newly_discovered').length === NODES, 'components discovered', 60_000);
    discovered.stop();

    const image = new SimWorld({ nodes: NODES, seed: 1 });
    const manifest = image.defaultImage.manifest;
    image.close();
    await gql(
      urlA,
      `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "t", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
      { b: [{ name: 'compute', path: manifest, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
    );

    // From the log's current end: whatever the session writes comes after it, however fast the
    // subscriptions register (their catch-up finds nothing, then they are live).
    const base = String((await db.pool.query('select coalesce(max(id), 0) as m from component_events')).rows[0].m);
    const steady = collect(watcher, EVENTS, { f: { session: 'r1' }, after: base });
    const flaky = wsClient(ws(urlB), devAdminHeaders());
    const interrupted = collect(flaky, EVENTS, { f: { session: 'r1' }, after: base });

    const created = await gql(
      urlA,
      `mutation { createSession(input: { operation: REBOOT, templateName: "t", name: "r1" }) { session { name status { status } } } }`,
    );
    expect(created.createSession.session.status.status).toBe('PENDING');
    const progress = collect(watcher, PROGRESS, { n: 'r1' });

    await interrupted.until((i) => i.length >= 20, 'first part before the disconnect', 60_000);
    await flaky.dispose();
    const firstPart = [...interrupted.items];

    await progress.until(() => progress.completed, 'session complete', 90_000);
    expect(progress.items.at(-1)).toMatchObject({ status: 'COMPLETE', percentSuccessful: 100 });

    const log = (await db.pool.query(`select id from component_events where session = 'r1' order by id`)).rows.map((r) => String(r.id));
    expect(log.length).toBeGreaterThanOrEqual(NODES * 5);
    await steady.until((i) => i.length >= log.length, 'every event on the steady subscriber', 30_000);
    expect(steady.items.map((e) => e.cursor)).toEqual(log);

    const resumedClient = wsClient(ws(urlB), devAdminHeaders());
    try {
      const resumed = collect(resumedClient, EVENTS, { f: { session: 'r1' }, after: firstPart.at(-1).cursor });
      await resumed.until((i) => firstPart.length + i.length >= log.length, 'the rest after resuming', 30_000);
      expect([...firstPart, ...resumed.items].map((e) => e.cursor)).toEqual(log);
    } finally {
      await resumedClient.dispose();
    }

    // Lag: from the worker's write (`at`, the start of its transaction) to arrival on API B.
    const lags = steady.items.map((e, i) => steady.arrivedAt[i]! - new Date(e.at).getTime());
    const transitions = steady.items.flatMap((e, i) => (e.kind === 'transition' && e.actor.startsWith('operator:') ? [lags[i]!] : []));
    const line = (name: string, v: number[]) =>
      `${name}: n=${v.length} p50=${percentile(v, 50)} ms p99=${percentile(v, 99)} ms max=${Math.max(...v)} ms`;
    process.stdout.write(`\nlive lag, worker -> API B subscriber\n  ${line('all events', lags)}\n  ${line('transitions', transitions)}\n`);
    expect(percentile(lags, 50)).toBeLessThan(1000);
    await watcher.dispose();
  }, 180_000);
});
