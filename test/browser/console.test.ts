/**
 * The web console in a real browser (Debian's chromium via playwright-core) against real bootorch
 * processes (test/browser/harness.ts), as an on-call engineer uses it: sign in with the offered dev
 * token; search the node table and find a node on the map, by mouse and by keyboard; a PCS outage
 * shows its nodes blocked by PCS (since when), not failed; a reboot with a node that never powers on
 * ends "complete with failures"; the failed node's explain says there is nothing more bootorch will do
 * and offers the retry, which runs as a new session of just it, dry run first, and shows the last
 * lines of its console with the way to the whole console; from the table, a reboot of selected nodes
 * (dry run first) and "clear failure and enable" of the failed one; the table's last-change filter;
 * pause and abort show as such; the API stopped under the console shows a banner with the data's age,
 * and on its return the map catches up from its cursor (no second snapshot) and the banner goes; a
 * viewer sees no buttons it cannot use and no console lines, a tenant only its nodes. axe-core runs on
 * every page, the serial console and the stale banner included: no serious or critical violation.
 * Screenshots go to docs/screenshots/. Every wait has a deadline; nothing sleeps.
 *
 *   BOOTORCH_BROWSER_TESTS=1 npx vitest run test/browser/console.test.ts
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { BROWSER_TESTS, SCREENSHOTS, axeViolations, mapCounts, readyCluster, startWorld, waitFor, type World } from './harness.ts';

const NODES = 768; // three cabinets; compute-a is the first 384
const BROKEN = 'x1000c0s1b0n1'; // never powers on
const OUTAGE_NODES = ['x1002c7s7b1n0', 'x1002c7s7b1n1'];
/** The broken node's console: more lines than the console page's box holds, a panic last. */
const PANIC = `${Array.from({ length: 59 }, (_, k) => `[ ${String(k + 1).padStart(2, '0')}.0] boot line ${String(k + 1).padStart(2, '0')} of the failed boot\r\n`).join('')}Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)\r\n`;
let w: World;
const snapshots: string[] = [];
const axeFound: string[] = [];
const axe = async (where: string) => {
  const found = await axeViolations(w.page, where);
  if (found.length) process.stdout.write(`axe: ${found.join('\n')}\n`);
  axeFound.push(...found);
};

describe.skipIf(!BROWSER_TESTS)('web console in chromium', () => {
  beforeAll(async () => {
    w = await startWorld({
      nodes: NODES,
      timing: 'interactive',
      faults: [`neverPowersOn=${BROKEN}`],
      options: {
        polling_frequency: 2,
        transit_polling_frequency: 0.5,
        max_power_off_wait_time: 30,
        max_power_on_wait_time: 30,
        max_boot_wait_time: 90,
        default_retry_policy: 1,
        discovery_frequency: 0,
        cleanup_completed_session_ttl: '0',
      },
    });
    await readyCluster(w, NODES);
    mkdirSync(SCREENSHOTS, { recursive: true });
    w.page.on('request', (r) => {
      if (r.method() === 'POST' && r.postData()?.includes('"operationName":"ConsoleMachineMap"')) snapshots.push(r.url());
    });
  }, 400_000);
  afterAll(async () => {
    await w?.stop();
  });

  test('sign in; search the node table and find a node on the map, by mouse and by keyboard', async () => {
    const { page } = w;
    await page.goto(`${w.baseUrl}/`);
    await page.getByTestId('use-dev-token').waitFor();
    await axe('sign-in');
    await page.getByTestId('use-dev-token').click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toContain('admin');
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"][data-counts]`, { timeout: 30_000 });
    expect(await mapCounts(page)).toEqual({ STABLE: NODES });
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe(`${NODES} match`);
    await axe('machine');
    // A group, resolved by the API against the inventory: the table and the map both narrow to it.
    await page.getByLabel('search').fill('compute-a');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByTestId('search-chip').textContent(), { timeout: 15_000 }).toBe(`compute-a: ${NODES / 2}`);
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe(`${NODES / 2} match`);
    // One xname: one row, and the node ringed on the map.
    await page.getByLabel('search').fill('X1000c0s1b0n1');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe('1 match');
    await expect.poll(() => page.getByTestId('machine-map').getAttribute('data-focus')).toBe(BROKEN);
    expect(await page.getByTestId('node-table').locator('tbody tr').first().getAttribute('data-node')).toBe(BROKEN);
    await page.getByLabel('search').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByTestId('search-chip').count(), { timeout: 5_000 }).toBe(0);
    // The keyboard path: the map takes the arrows and Enter; the table's sort is a button.
    await page.getByTestId('machine-map').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => page.getByTestId('map-tip').textContent(), { timeout: 5_000 }).toContain('x1000c0s0b0n1');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=node-page]', { timeout: 10_000 });
    await page.goBack();
    await page.getByRole('button', { name: 'Changed' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('columnheader', { name: /Changed/ }).getAttribute('aria-sort')).toBe('descending');
    // The last-change filter, counted back by the API: discovery wrote every node within the hour.
    await page.getByLabel('Last change').selectOption('old1h');
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe('0 match');
    await page.getByLabel('Last change').selectOption('1h');
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe(`${NODES} match`);
    await page.getByLabel('Last change').selectOption('');
  });

  test('PCS down: its nodes are blocked by PCS since when, not failures; explain says it waits for PCS', async () => {
    const { page } = w;
    await w.simFaults({ services: { pcs: { down: true } } });
    await w.gql(
      'mutation($l: String!) { createSession(input: { operation: REBOOT, templateName: "compute", name: "pcs-out", limit: $l }) { session { name } } }',
      { l: OUTAGE_NODES.join(',') },
    );
    await page.goto(`${w.baseUrl}/#/sessions/pcs-out`);
    await expect.poll(() => page.getByTestId('blocked').textContent(), { timeout: 60_000 }).toMatch(/PCS failing since .*: 2 nodes wait/);
    expect(await page.getByTestId('failure-groups').count()).toBe(0);
    expect(await page.getByTestId('result').getAttribute('data-result')).toBe('RUNNING');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-blocked-by-pcs.png'), fullPage: true });
    await axe('session (blocked)');
    await page.goto(`${w.baseUrl}/#/node/${OUTAGE_NODES[0]}`);
    await expect.poll(() => page.getByTestId('next-step').textContent(), { timeout: 15_000 }).toContain('Waiting for PCS');
    expect(await page.getByTestId('explain').textContent()).toContain('blocked: PCS failing since');
    await w.simFaults({ services: { pcs: { down: false } } });
    await page.goto(`${w.baseUrl}/#/sessions/pcs-out`);
    await page.waitForSelector('[data-testid=session-page][data-result=COMPLETE]', { timeout: 120_000 });
  }, 240_000);

  test('reboot compute-a from the console: dry run first, the map walks the phases, the result is "complete with failures"', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'New session' }).first().click();
    await axe('new session');
    await page.getByLabel('limit').fill('compute-a');
    await page.getByLabel('name').fill('console-reboot');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect
      .poll(() => page.getByTestId('plan-counts').textContent(), { timeout: 30_000 })
      .toContain(`${NODES / 2} nodes: ${NODES / 2} power cycle`);
    await page.getByRole('button', { name: `Start reboot of ${NODES / 2} nodes` }).click();
    await page.waitForSelector('[data-testid=session-page]', { timeout: 15_000 });

    await page.getByRole('link', { name: 'Machine' }).click();
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"]`);
    const seen = new Set<string>();
    const see = async (statuses: string[]) => {
      for (const s of Object.keys(await mapCounts(page))) seen.add(s);
      return statuses.every((s) => seen.has(s));
    };
    await waitFor(() => see(['POWER_OFF_GRACEFULLY_CALLED']), 'nodes powering off on the map', 60_000);
    await waitFor(() => see(['POWER_ON_CALLED']), 'nodes powering on on the map', 60_000);
    await waitFor(
      async () => {
        const c = await mapCounts(page);
        if (Object.keys(c).length < 3) return false;
        const legend = await page
          .getByTestId('legend')
          .locator('b[data-status]')
          .evaluateAll((bs) => bs.map((b) => [b.getAttribute('data-status'), Number(b.textContent)]));
        return legend.every(([s, n]) => (c[s as string] ?? 0) === n);
      },
      'the map mid-reboot, three statuses at once',
      60_000,
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, 'map-mid-reboot.png') });
    await waitFor(() => see(['CONFIGURING']), 'nodes configuring on the map', 90_000);
    await waitFor(
      async () => (await mapCounts(page)).FAILED === 1 && (await mapCounts(page)).STABLE === NODES - 1,
      'all stable but the broken node',
      180_000,
    );
    const failed = await w.gql('{ components(filter: { status: [FAILED] }) { nodes { id failureReason } } }');
    expect(failed.components.nodes.map((n: { id: string }) => n.id)).toEqual([BROKEN]);
    await page.goto(`${w.baseUrl}/#/sessions/console-reboot`);
    await page.waitForSelector('[data-testid=session-page][data-result=COMPLETE_WITH_FAILURES]', { timeout: 60_000 });
    expect(await page.getByTestId('result').textContent()).toContain('complete with failures');
    await expect.poll(() => page.getByTestId('failure-groups').textContent(), { timeout: 10_000 }).toContain(BROKEN);
    await axe('session (complete with failures)');
  }, 420_000);

  test('the failed node: explain says nothing more will happen, what to do and its last console lines; retry it from the table, dry run first', async () => {
    const { page } = w;
    // This world's nodes are CSM's (the simulator's), whose consoles bootorch does not capture (it keeps
    // them for standalone IPMI nodes, test/e2e/consoles.test.ts): the rows the capture would write.
    await w.db.pool.query(
      `insert into console_chunks (node, attempt, text, bytes) values ($1, date_trunc('milliseconds', now()), $2, length($2))`,
      [BROKEN, PANIC],
    );
    await page.getByRole('link', { name: 'Machine' }).click();
    await page.getByLabel('status', { exact: true }).selectOption('FAILED');
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe('1 match');
    const at = (await page.evaluate((id) => (window as any).__bootorchMap.locate(id), BROKEN)) as { x: number; y: number };
    await page.mouse.move(at.x, at.y);
    await expect.poll(() => page.getByTestId('map-tip').textContent(), { timeout: 5_000 }).toContain(BROKEN);
    await page.mouse.down();
    await page.mouse.up();
    await page.waitForSelector('[data-testid=node-page]', { timeout: 10_000 });
    const reason = (await w.gql(`{ component(id: "${BROKEN}") { failureReason error } }`)).component;
    expect(reason.failureReason).not.toBe('');
    await expect.poll(() => page.getByTestId('failure-reason').textContent(), { timeout: 10_000 }).toContain(reason.failureReason);
    const next = page.getByTestId('next-step');
    await expect.poll(() => next.textContent(), { timeout: 10_000 }).toContain('Nothing more: bootorch has given up on it');
    expect(await next.getAttribute('data-action')).toBe('RETRY');
    expect(await page.getByTestId('advice').textContent()).toContain('then retry it');
    // Never a contradiction: no "would power on" decision for a disabled node, no "active" ended session.
    const explain = (await page.getByTestId('explain').textContent()) ?? '';
    expect(explain).not.toContain('status decision');
    expect(explain).not.toContain('session is active');
    // Its last console lines (the newest ten of explain's twenty), and the way to the whole console.
    const tail = (await page.getByTestId('console-tail').textContent()) ?? '';
    expect(tail).toContain('Kernel panic - not syncing: VFS: Unable to mount root fs');
    expect(tail).toContain('boot line 51 ');
    expect(tail).not.toContain('boot line 50 ');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'failed-node.png'), fullPage: true });
    await axe('node (failed)');
    // The explain button opens the retry; Escape closes it (keyboard).
    await page.getByRole('button', { name: 'Retry this node…' }).click();
    await page.getByTestId('run-nodes').waitFor();
    await axe('retry dialog');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByTestId('run-nodes').count()).toBe(0);
    // The whole console, from the tail's link: every kept line, scrolled to the end.
    await page.getByRole('link', { name: 'the whole console' }).click();
    await expect.poll(() => page.getByTestId('console-text').textContent(), { timeout: 15_000 }).toContain('boot line 01 ');
    expect(await page.getByTestId('console-text').textContent()).toContain('Kernel panic');
    await axe('node console');
    await page.goBack();

    // From the table: the failed filter, select, retry: the dry run first, then a session of just it.
    await page.goBack();
    await page.getByLabel('status', { exact: true }).selectOption('FAILED');
    await page.getByLabel(`select ${BROKEN}`).check();
    await page.getByRole('button', { name: 'Retry 1 failed…' }).click();
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => page.getByTestId('plan-counts').textContent(), { timeout: 30_000 }).toContain('1 nodes:');
    await page.getByRole('button', { name: /^Start reboot of 1 nodes/ }).click();
    await page.waitForSelector('[data-testid=session-page]', { timeout: 15_000 });
    // The new session's setup takes the node (a pass of the worker's: seconds on a loaded machine).
    const retried = await waitFor(
      async () => {
        const c = (await w.gql(`{ component(id: "${BROKEN}") { session enabled } }`)).component;
        return c.session && c.session !== 'console-reboot' ? (c.session as string) : undefined;
      },
      'the retry session takes the failed node',
      120_000,
    );
    const s = await w.gql('query($n: String!) { session(name: $n) { templateName limit operation } }', { n: retried });
    expect(s.session).toEqual({ templateName: 'compute', limit: BROKEN, operation: 'REBOOT' });
  }, 300_000);

  test('bulk actions from the table: reboot two selected nodes (dry run first); clear the failure of the failed node and enable it', async () => {
    const { page } = w;
    const PAIR = ['x1000c0s0b0n0', 'x1000c0s0b0n1'];
    await page.getByRole('link', { name: 'Machine' }).click();
    await page.getByLabel('search').fill('x1000c0s0b0');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe('2 match');
    await page.getByLabel('select this page').check();
    await page.getByRole('button', { name: 'Reboot…' }).click();
    await page.getByTestId('run-nodes').waitFor();
    expect(await page.getByTestId('run-nodes').textContent()).toMatch(
      new RegExp(`these 2 nodes( \\(from session [^)]+\\))?: ${PAIR.join(', ')}`),
    );
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => page.getByTestId('plan-counts').textContent(), { timeout: 30_000 }).toContain('2 nodes: 2 power cycle');
    await page.getByRole('button', { name: /^Start reboot of 2 nodes/ }).click();
    await page.waitForSelector('[data-testid=session-page]', { timeout: 15_000 });
    const rebooted = decodeURIComponent(new URL(page.url()).hash.replace('#/sessions/', ''));
    const s = await w.gql('query($n: String!) { session(name: $n) { templateName limit operation } }', { n: rebooted });
    expect(s.session).toEqual({ templateName: 'compute', limit: PAIR.join(','), operation: 'REBOOT' });
    await waitFor(
      async () => {
        const r = await w.gql('query($ids: [ID!]) { components(filter: { ids: $ids }) { nodes { session } } }', { ids: PAIR });
        return r.components.nodes.every((n: { session: string }) => n.session === rebooted);
      },
      `the reboot session ${rebooted} takes both nodes`,
      120_000,
    );

    // The retry session fails the broken node again (it still never powers on): clear it and enable it.
    await waitFor(
      async () => {
        // Setup enables a node as it takes it: disabled and failed in the new session is its failure there.
        const c = (await w.gql(`{ component(id: "${BROKEN}") { session enabled status { status } } }`)).component;
        return c.session !== 'console-reboot' && c.status.status === 'FAILED' && !c.enabled;
      },
      `${BROKEN} failed again in its retry session`,
      240_000,
    );
    await page.getByRole('link', { name: 'Machine' }).click();
    await page.getByLabel('status', { exact: true }).selectOption('FAILED');
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe('1 match');
    await page.getByLabel(`select ${BROKEN}`).check();
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole('button', { name: 'Clear failure and enable' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'nodes enabled' }).textContent(), { timeout: 15_000 })
      .toBe('1 nodes enabled.');
    expect(asked).toContain('Clear the failure of 1 nodes and enable them?');
    // (Its attempt counters, zeroed too, are not asserted: the operators may power it on at once.)
    const c = (await w.gql(`{ component(id: "${BROKEN}") { enabled error } }`)).component;
    expect(c).toEqual({ enabled: true, error: '' });
  }, 420_000);

  test('pause, then abort a session: the badge says paused, then aborted', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'New session' }).first().click();
    await page.getByLabel('limit').fill('compute-b');
    await page.getByLabel('name').fill('console-abort');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.getByRole('button', { name: /^Start reboot of/ }).click();
    await page.waitForSelector('[data-testid=session-page][data-status=RUNNING]', { timeout: 60_000 });
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor({ timeout: 15_000 });
    await page.waitForSelector('[data-testid=session-page][data-result=PAUSED]', { timeout: 15_000 });
    expect(await page.getByTestId('result').textContent()).toContain('paused');
    expect((await w.gql('{ session(name: "console-abort") { paused } }')).session.paused).toBe(true);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Abort' }).click();
    await page.waitForSelector('[data-testid=session-page][data-result=ABORTED]', { timeout: 60_000 });
    await page.goto(`${w.baseUrl}/#/sessions`);
    await expect
      .poll(() => page.getByTestId('session-console-abort').getByTestId('result').getAttribute('data-result'), { timeout: 15_000 })
      .toBe('ABORTED');
    expect(await page.getByTestId('session-console-reboot').getByTestId('result').getAttribute('data-result')).toBe(
      'COMPLETE_WITH_FAILURES',
    );
    await axe('sessions');
  }, 400_000);

  test('the API goes away: a banner with the data age; back, the map catches up from its cursor and the banner goes', async () => {
    const { page } = w;
    await page.goto(`${w.baseUrl}/#/`);
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"][data-counts]`, { timeout: 30_000 });
    const loads = snapshots.length;
    await w.gql(
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "while-away", limit: "x1001c7s0b0n0,x1001c7s0b0n1" }) { session { name } } }',
    );
    await w.stopApi();
    await page.getByTestId('stale-banner').waitFor({ timeout: 30_000 });
    await expect
      .poll(async () => Number(await page.getByTestId('stale-banner').getAttribute('data-age')), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    expect(await page.getByTestId('stale-banner').textContent()).toMatch(/Not live: .* s old/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-stale.png') });
    await axe('machine (stale banner)');
    // The worker goes on meanwhile: the nodes leave stable before the API is back.
    await waitFor(
      async () =>
        (await w.db.pool.query(`select count(*)::int as n from component_events where session = 'while-away' and kind = 'transition'`))
          .rows[0].n > 0,
      'the session moved while the API was down',
      60_000,
    );
    await w.startApi();
    // graphql-ws's reconnect backs off exponentially (1, 2, 4, ... s and a random part): after a long
    // outage (minutes at load 40, when the API is slow to start again) its next try can be a minute away.
    await expect.poll(() => page.getByTestId('stale-banner').count(), { timeout: 120_000 }).toBe(0);
    // The map equals the database again, from the replay of what it missed: no second snapshot.
    await waitFor(
      async () => {
        const db = Object.fromEntries(
          (
            await w.db.pool.query(
              `select upper(status) as s, count(*)::int as n from components where phase not in ('deploying','writing','switching_to_disk','booting_disk') group by 1`,
            )
          ).rows.map((r) => [r.s, r.n]),
        );
        return JSON.stringify(Object.entries(await mapCounts(page)).sort()) === JSON.stringify(Object.entries(db).sort());
      },
      'the map equal to the database after the reconnect',
      60_000,
    );
    expect(snapshots.length).toBe(loads);
  }, 400_000);

  test('a request the API never answers, one it cannot reach: the console keeps its token, asks again and draws the map', async () => {
    const { page } = w;
    await page.goto(`${w.baseUrl}/#/`);
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"][data-counts]`, { timeout: 30_000 });
    let whoami = 0;
    let maps = 0;
    const handler = async (route: Route) => {
      const body = route.request().postData() ?? '';
      // The sign-in check's first try cannot connect; the first snapshot is never answered (a stuck proxy).
      if (body.includes('whoami') && whoami++ === 0) return route.abort('connectionreset');
      if (body.includes('"operationName":"ConsoleMachineMap"') && maps++ === 0) return;
      return route.fallback();
    };
    await page.route('**/graphql', handler);
    try {
      await page.reload();
      await expect
        .poll(() => page.getByRole('status').first().textContent(), { timeout: 15_000 })
        .toMatch(/checking the stored token… bootorch cannot be reached .*: asking again\./);
      // The snapshot's wait ends at the console's bound (30 s), and it is asked again.
      await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"][data-counts]`, { timeout: 90_000 });
      expect(whoami).toBe(2);
      expect(maps).toBe(2);
      expect(await page.getByTestId('whoami').textContent()).toContain('admin');
    } finally {
      await page.unroute('**/graphql', handler);
    }
  }, 180_000);

  test('a viewer sees no buttons it cannot use; a tenant sees only its nodes; no serious accessibility violation anywhere', async () => {
    const { page } = w;
    const viewer = (await createApiToken(w.db.db, { role: 'viewer', subject: 'watcher' })).token;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token or OIDC access token').fill(viewer);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toContain('viewer');
    await page.goto(`${w.baseUrl}/#/sessions`);
    await page.getByTestId('session-console-reboot').waitFor({ timeout: 60_000 });
    expect(await page.getByRole('button', { name: /Pause|Resume|Abort/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New session' }).count()).toBe(0);
    await page.goto(`${w.baseUrl}/#/`);
    await page.getByTestId('node-table').waitFor();
    expect(await page.getByRole('button', { name: /Retry|Reboot|enable/ }).count()).toBe(0);
    // Consoles can hold secrets: explain's tail is null for a viewer, and the console page says why.
    await page.goto(`${w.baseUrl}/#/node/${BROKEN}`);
    await page.getByTestId('explain').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('console-tail').count()).toBe(0);
    await page.goto(`${w.baseUrl}/#/node/${BROKEN}/console`);
    await expect.poll(() => page.getByTestId('console-error').textContent(), { timeout: 15_000 }).toContain('can hold secrets');
    await axe('node console (viewer refused)');

    const mine = ['x1001c0s0b0n0', 'x1001c0s0b0n1', 'x1001c0s0b1n0'];
    await w.gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: mine });
    const tenant = (await createApiToken(w.db.db, { role: 'viewer', subject: 'acme-watcher', tenant: 'acme' })).token;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token or OIDC access token').fill(tenant);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.goto(`${w.baseUrl}/#/`);
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${mine.length}"]`, { timeout: 15_000 });
    await expect.poll(() => page.getByTestId('node-count').textContent(), { timeout: 15_000 }).toBe(`${mine.length} match`);
    expect(axeFound, 'serious or critical axe-core violations').toEqual([]);
  });
});

/**
 * Safer large operations in the console, in a world of their own (16 nodes, fast hardware): a large
 * session waits for a second admin (docs/approval.md) and its creator's approval is refused in the
 * API's words; another admin's starts it. The node that fails in it is quarantined (threshold 1,
 * docs/quarantine.md): its page says why, and its release button releases it in the API.
 *
 *   BOOTORCH_BROWSER_TESTS=1 npx vitest run test/browser/console.test.ts -t 'approval and quarantine'
 */
describe.skipIf(!BROWSER_TESTS)('approval and quarantine in chromium', () => {
  const SMALL = 16; // compute-a is the first 8
  const FAILING = 'x1000c0s0b0n1'; // in compute-a; never powers on
  let v: World;
  const admins = { alice: '', bob: '' };
  const found: string[] = [];
  const signIn = async (token: string, role: string) => {
    const { page } = v;
    if (await page.getByRole('button', { name: 'Sign out' }).count()) await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token or OIDC access token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toContain(role);
  };
  const explainQuarantine = async () =>
    (await v.gql('query($id: ID!) { explain(componentId: $id) { quarantine { failedSessions summary } } }', { id: FAILING })).explain
      .quarantine;

  beforeAll(async () => {
    v = await startWorld({
      nodes: SMALL,
      timing: 'fast',
      faults: [`neverPowersOn=${FAILING}`],
      options: {
        polling_frequency: 2,
        transit_polling_frequency: 0.5,
        max_power_off_wait_time: 5,
        max_power_on_wait_time: 5,
        max_boot_wait_time: 20,
        default_retry_policy: 1,
        discovery_frequency: 0,
        cleanup_completed_session_ttl: '0',
        approval_node_threshold: 4,
        quarantine_after_failed_sessions: 1,
      },
    });
    await readyCluster(v, SMALL);
    admins.alice = (await createApiToken(v.db.db, { role: 'admin', subject: 'alice' })).token;
    admins.bob = (await createApiToken(v.db.db, { role: 'admin', subject: 'bob' })).token;
  }, 400_000);
  afterAll(async () => {
    await v?.stop();
  });

  test('a large session waits for a second admin: shown with its reason, the creator is refused, another admin starts it', async () => {
    const { page } = v;
    await page.goto(`${v.baseUrl}/`);
    await signIn(admins.alice, 'alice');
    await v.gql(
      'mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "big", limit: "compute-a" }) { session { name } } }',
      {},
      admins.alice,
    );
    // Opened at once: the page asks again until setup has decided that the session waits.
    await page.goto(`${v.baseUrl}/#/sessions/big`);
    const approval = page.getByTestId('approval');
    await page.waitForSelector('[data-testid=approval][data-waiting=true]', { timeout: 60_000 });
    expect(await page.getByTestId('approval-badge').textContent()).toContain("waiting for a second admin's approval");
    expect(await approval.textContent()).toMatch(/Why: 8 nodes, more than approval_node_threshold \(4\)/);
    expect(await approval.textContent()).toContain('its creator (alice) may not approve it');
    expect(await page.getByTestId('result').getAttribute('data-result')).toBe('PENDING');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'session-awaiting-approval.png'), fullPage: true });
    found.push(...(await axeViolations(page, 'session (waiting for approval)')));

    // Its creator: the button is there (alice is an admin), the API refuses, the console says why.
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByTestId('approval-error').textContent(), { timeout: 15_000 })
      .toMatch(/alice created session big; another admin must approve it/);
    const still = await v.gql('{ session(name: "big") { status { status } approval { waiting } } }');
    expect(still.session).toEqual({ status: { status: 'PENDING' }, approval: { waiting: true } });
    await page.goto(`${v.baseUrl}/#/sessions`);
    await expect.poll(() => page.getByTestId('session-big').getByTestId('approval-badge').count(), { timeout: 15_000 }).toBe(1);

    // Another admin approves it: who and when show, and the session starts.
    await signIn(admins.bob, 'bob');
    await page.goto(`${v.baseUrl}/#/sessions/big`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForSelector('[data-testid=approval][data-waiting=false]', { timeout: 15_000 });
    expect(await approval.textContent()).toMatch(/^Approved by bob at .+ \(8 nodes, more than approval_node_threshold \(4\)/);
    const started = await v.gql('{ session(name: "big") { status { status } approval { waiting approvedBy approvedAt } } }');
    expect(started.session.approval).toMatchObject({ waiting: false, approvedBy: 'bob' });
    await page.waitForSelector('[data-testid=session-page]:not([data-status=PENDING])', { timeout: 60_000 });
    await waitFor(
      async () => Number((await v.db.pool.query(`select count(*) from components where session = 'big'`)).rows[0].count) === 8,
      'setup of the approved session takes its 8 nodes',
      60_000,
    );
    found.push(...(await axeViolations(page, 'session (approved)')));
  }, 300_000);

  test('the node that failed it is quarantined: its page says why, and the release button releases it', async () => {
    const { page } = v;
    await page.waitForSelector('[data-testid=session-page][data-result=COMPLETE_WITH_FAILURES]', { timeout: 180_000 });
    await waitFor(async () => (await explainQuarantine()) !== null, `${FAILING} quarantined`, 30_000);
    await page.goto(`${v.baseUrl}/#/node/${FAILING}`);
    const note = page.getByTestId('quarantine');
    await note.waitFor({ timeout: 15_000 });
    const text = (await note.textContent()) ?? '';
    expect(text).toContain('Quarantined:');
    expect(text).toContain((await explainQuarantine()).summary);
    expect(text).toMatch(/big \(power_on_timeout|big \(boot_never_reported/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'node-quarantined.png'), fullPage: true });
    found.push(...(await axeViolations(page, 'node (quarantined)')));
    await page.getByRole('button', { name: 'Release from quarantine' }).click();
    await expect.poll(() => explainQuarantine(), { timeout: 15_000 }).toBeNull();
    await expect.poll(() => note.count(), { timeout: 15_000 }).toBe(0);
    const again = await v.gql('mutation($ids: [ID!]!) { releaseQuarantine(ids: $ids) { released notQuarantined } }', { ids: [FAILING] });
    expect(again.releaseQuarantine).toEqual({ released: [], notQuarantined: [FAILING] });
  }, 300_000);

  test('rescue a node from its page (dry run first), see it rescued, and unrescue it (docs/rescue.md)', async () => {
    const { page } = v;
    const NODE = 'x1000c0s1b0n0';
    // The rescue image: the world's own image, as the option every boot set falls back to.
    const image = (await v.gql('{ sessionTemplate(name: "compute") { bootSets { path } } }')).sessionTemplate.bootSets[0].path;
    await v.gql('mutation($m: String!) { patchOptions(patch: { defaultRescueImage: $m }) { defaultRescueImage } }', { m: image });
    const node = async () => (await v.gql(`{ component(id: "${NODE}") { session rescue { kernel } } }`)).component;
    const run = async (button: string, operation: 'rescue' | 'unrescue') => {
      await page.goto(`${v.baseUrl}/#/node/${NODE}`);
      // A hash change: the page of the node shown before may still be on screen for a moment.
      await expect.poll(() => page.locator('[data-testid=node-page] h1').textContent(), { timeout: 15_000 }).toContain(NODE);
      await page.getByRole('button', { name: button }).click();
      await page.getByTestId('run-nodes').waitFor();
      expect(await page.getByTestId('run-nodes').textContent()).toContain(`these 1 nodes: ${NODE}`);
      await page.getByRole('button', { name: 'Dry run' }).click();
      await expect.poll(() => page.getByTestId('plan-counts').textContent(), { timeout: 30_000 }).toContain('1 nodes:');
      await page.getByRole('button', { name: new RegExp(`^Start ${operation} of 1 nodes`) }).click();
      await page.waitForSelector('[data-testid=session-page]', { timeout: 15_000 });
      let last = '';
      const name = await waitFor(
        async () => {
          const c = await node();
          const s = c.session && (await v.gql('query($n: String!) { session(name: $n) { operation result } }', { n: c.session })).session;
          last = JSON.stringify({ c, s });
          return s?.operation === operation.toUpperCase() && s.result === 'COMPLETE' ? (c.session as string) : undefined;
        },
        `the ${operation} session completes`,
        180_000,
      ).catch(async (e) => {
        const x = await v.gql(
          `{ sessions { name operation limit result status { error } } explain(componentId: "${NODE}") { summary next } component(id: "${NODE}") { error failureReason status { status phase } actualState { bootArtifacts { kernel } } desiredState { bootArtifacts { kernel } } } }`,
        );
        throw new Error(`${(e as Error).message}: last ${last}; ${JSON.stringify(x)}`);
      });
      return name;
    };

    await run('Rescue: boot its rescue image…', 'rescue');
    expect((await node()).rescue).toMatchObject({ kernel: expect.stringMatching(/kernel$/) });
    await page.goto(`${v.baseUrl}/#/node/${NODE}`);
    await expect
      .poll(() => page.getByTestId('rescued').textContent(), { timeout: 15_000 })
      .toContain('(its desired state is kept for the unrescue)');
    found.push(...(await axeViolations(page, 'node (rescued)')));

    await run('Unrescue: boot its desired state…', 'unrescue');
    expect((await node()).rescue).toBeNull();
    await page.goto(`${v.baseUrl}/#/node/${NODE}`);
    await page.getByTestId('rescue-action').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('rescued').count()).toBe(0);
    expect(found, 'serious or critical axe-core violations').toEqual([]);
  }, 400_000);
});
