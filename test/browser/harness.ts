/**
 * The browser tests' world: a fresh database, `bootorch sim` (with fault knobs), `bootorch api` in dev
 * auth mode (the console is served by it; the dev token is offered to loopback clients) and
 * `bootorch worker`, as real processes, plus Debian's chromium driven by playwright-core. The console
 * is built first (`npm run build:web`), so the test runs what the tree holds.
 *
 * Run with BOOTORCH_BROWSER_TESTS=1 (skipped otherwise); CHROMIUM_PATH overrides /usr/bin/chromium.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { waitFor } from '../helpers/wait.ts';
import { DEV_ADMIN_TOKEN, devAuthEnv } from '../helpers/auth.ts';
import { ROOT, startRole, type RoleProcess } from '../helpers/processes.ts';
import { freePort } from '../helpers/ports.ts';

export const BROWSER_TESTS = process.env.BOOTORCH_BROWSER_TESTS === '1';
/** How long a process may take to start: minutes, not seconds, on a shared machine at load 30. */
const START_MS = 180_000;
export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

export interface World {
  db: TestDb;
  baseUrl: string;
  simUrl: string;
  simImage: string;
  browser: BrowserContext;
  page: Page;
  gql(query: string, variables?: Record<string, unknown>, token?: string): Promise<any>;
  /** The simulator's fault knobs (POST /sim/faults). */
  simFaults(body: unknown): Promise<void>;
  /** Stop the API process (the console loses its live connection), and start it again on the same port. */
  stopApi(): Promise<void>;
  startApi(): Promise<void>;
  logs(): string;
  stop(): Promise<void>;
}

/** Debian's chromium (CHROMIUM_PATH to override), headless, with its profile in `userDataDir` (an empty folder). */
export function launchChromium(userDataDir: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * `npm run build:web` as a user runs it: vitest sets NODE_ENV=test, and Vite builds with the NODE_ENV it
 * finds, which would give the browser React's development build (several times slower).
 */
export function buildConsole(): void {
  execFileSync('npm', ['run', '-s', 'build:web'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' } });
}

/** Polls with a deadline: the one helper (test/helpers/wait.ts). */
export { waitFor };

export async function startWorld(o: {
  nodes: number;
  timing: 'fast' | 'interactive';
  faults?: string[];
  options: Record<string, unknown>;
}): Promise<World> {
  buildConsole();
  const db = await freshDb();
  await db.pool.query('insert into options (id, data) values (1, $1)', [JSON.stringify(o.options)]);
  const apiPort = await freePort();
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const procs: [string, RoleProcess][] = [];
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'bootorch-chromium-'));
  let browser: BrowserContext | undefined;
  const logs = () => procs.map(([n, p]) => `--- ${n} (last 2000 chars):\n${p.output().slice(-2000)}`).join('\n');
  const stop = async () => {
    await browser?.close();
    await Promise.all(procs.map(([, p]) => p.stop()));
    await db.drop();
    rmSync(userDataDir, { recursive: true, force: true });
  };
  try {
    const sim = startRole('sim', {}, [
      '--nodes',
      String(o.nodes),
      '--port',
      '0',
      '--timing',
      o.timing,
      ...(o.faults ?? []).flatMap((f) => ['--fault', f]),
      '--bootorch-url',
      `${baseUrl}/graphql`,
      '--report-token',
      DEV_ADMIN_TOKEN,
    ]);
    procs.push(['sim', sim]);
    const simUrl = (await sim.waitFor(/simulator: GET (\S+)\/sim\/info/, START_MS))[1]!;
    const simEnv = Object.fromEntries([...sim.output().matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const env = {
      ...devAuthEnv(),
      DATABASE_URL: db.url,
      BOOTORCH_ADAPTERS: 'http',
      PORT: String(apiPort),
      HSM_URL: simEnv.HSM_URL!,
      PCS_URL: simEnv.PCS_URL!,
      BSS_URL: simEnv.BSS_URL!,
      CFS_URL: simEnv.CFS_URL!,
      S3_URL: simEnv.S3_URL!,
      // The console and the test share one token: room for a browser's bursts next to the test's polling.
      BOOTORCH_RATE_LIMIT_BURST: '0',
    };
    // One after the other: first starts at once on a fresh database can deadlock in pg-boss's queue creation.
    const startApi = async () => {
      const api = startRole('api', env);
      procs.push(['api', api]);
      await api.waitFor(/bootorch api: (\S+)/, START_MS);
    };
    await startApi();
    const stopApi = async () => {
      const k = procs.findIndex(([n]) => n === 'api');
      if (k < 0) return;
      const [[, api]] = procs.splice(k, 1) as [[string, RoleProcess]];
      await api.stop();
    };
    procs.push(['worker', startRole('worker', env)]);
    const gql = async (query: string, variables: Record<string, unknown> = {}, token = DEV_ADMIN_TOKEN) => {
      const r = await fetch(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data?: any; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    browser = await launchChromium(userDataDir);
    const page = browser.pages()[0] ?? (await browser.newPage());
    const simFaults = async (body: unknown) => {
      const r = await fetch(`${simUrl}/sim/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`sim faults: HTTP ${r.status} ${await r.text()}`);
    };
    return { db, baseUrl, simUrl, simImage: simEnv.SIM_IMAGE!, browser, page, gql, simFaults, stopApi, startApi, logs, stop };
  } catch (e) {
    await stop().catch(() => {});
    throw e;
  }
}

/** The components discovery made, and a `compute` template over both compute groups. */
export async function readyCluster(w: World, nodes: number): Promise<void> {
  await waitFor(
    async () => Number((await w.db.pool.query('select count(*) from components')).rows[0].count) === nodes,
    `${nodes} components discovered`,
    300_000,
  );
  await w.gql(
    `mutation($b: [BootSetInput!]!) { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: $b }) { template { name } } }`,
    { b: [{ name: 'compute', path: w.simImage, type: 's3', nodeGroups: ['compute-a', 'compute-b'] }] },
  );
}

const AXE = path.join(ROOT, 'node_modules/axe-core/axe.min.js');

/**
 * axe-core on the page as it is now (WCAG 2.x A and AA rules and best practices): the violations of
 * impact serious or critical, as "rule: target" lines (the test expects none). The others are printed.
 */
export async function axeViolations(page: Page, where: string): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = (await page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.slice(0, 3).map((n: any) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`),
    }));
  })) as { id: string; impact: string; targets: string[] }[];
  const minor = violations.filter((v) => v.impact !== 'serious' && v.impact !== 'critical');
  if (minor.length) process.stdout.write(`axe (${where}), not serious: ${minor.map((v) => `${v.id} (${v.impact})`).join(', ')}\n`);
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.targets.map((t) => `${where}: ${v.id} (${v.impact}): ${t}`));
}

/** The map's status counts, as the canvas last drew them. */
export async function mapCounts(page: Page): Promise<Record<string, number>> {
  return JSON.parse((await page.getByTestId('machine-map').getAttribute('data-counts')) ?? '{}') as Record<string, number>;
}
