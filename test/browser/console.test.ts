/**
 * The web console in a real browser (Debian's chromium via playwright-core) against real bootorch
 * processes (test/browser/harness.ts): sign in with the offered dev token, start a reboot of a group
 * with its dry run shown first, watch the map go through the phases, open the failed node from the
 * map and read its reason, pause and abort a second session; a viewer sees no buttons, a tenant only
 * its nodes. Screenshots go to docs/screenshots/. Every wait has a deadline; nothing sleeps.
 *
 *   BOOTORCH_BROWSER_TESTS=1 npx vitest run test/browser/
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApiToken } from '../../src/auth/index.ts';
import { BROWSER_TESTS, SCREENSHOTS, mapCounts, readyCluster, startWorld, waitFor, type World } from './harness.ts';

const NODES = 768; // three cabinets; compute-a is the first 384
const BROKEN = 'x1000c0s1b0n1'; // never powers on
let w: World;

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
  }, 180_000);
  afterAll(async () => {
    await w?.stop();
  });

  test('sign in with the dev token; the whole machine is on the map', async () => {
    const { page } = w;
    await page.goto(`${w.baseUrl}/`);
    await page.getByTestId('use-dev-token').click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toContain('admin');
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"][data-counts]`, { timeout: 30_000 });
    expect(await mapCounts(page)).toEqual({ STABLE: NODES });
    // The group filter: an HSM group, resolved by the API's dry run.
    await page.getByLabel('group').fill('compute-a');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('.chip').textContent(), { timeout: 15_000 }).toBe(`compute-a: ${NODES / 2}`);
    await page.getByLabel('group').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('.chip').count(), { timeout: 5_000 }).toBe(0);
  });

  test('reboot compute-a from the console: the plan first, then the map walks through the phases', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'New session' }).first().click();
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
    // Each phase must show on the map, as the live events arrive.
    const seen = new Set<string>();
    const see = async (statuses: string[]) => {
      const c = await mapCounts(page);
      for (const s of Object.keys(c)) seen.add(s);
      return statuses.every((s) => seen.has(s));
    };
    await waitFor(() => see(['POWER_OFF_GRACEFULLY_CALLED']), 'nodes powering off on the map', 60_000);
    await waitFor(() => see(['POWER_ON_CALLED']), 'nodes powering on on the map', 60_000);
    // The screenshot: three statuses at once, and the legend (throttled) caught up with the map.
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
    // The map agrees with the API, node for node.
    const failed = await w.gql('{ components(filter: { status: [FAILED] }) { nodes { id failureReason } } }');
    expect(failed.components.nodes.map((n: { id: string }) => n.id)).toEqual([BROKEN]);
  }, 420_000);

  test('the failed node: hover names it, a click opens its page with the reason and explain', async () => {
    const { page } = w;
    await page.getByLabel('status').selectOption('FAILED');
    const at = (await page.evaluate((id) => (window as any).__bootorchMap.locate(id), BROKEN)) as { x: number; y: number };
    await page.mouse.move(at.x, at.y);
    await expect.poll(() => page.getByTestId('map-tip').textContent(), { timeout: 5_000 }).toContain(BROKEN);
    await page.mouse.down();
    await page.mouse.up();
    await page.waitForSelector('[data-testid=node-page]', { timeout: 10_000 });
    const reason = (await w.gql(`{ component(id: "${BROKEN}") { failureReason error } }`)).component;
    expect(reason.failureReason).not.toBe('');
    await expect.poll(() => page.getByTestId('failure-reason').textContent(), { timeout: 10_000 }).toContain(reason.failureReason);
    await expect.poll(() => page.getByTestId('explain').textContent(), { timeout: 10_000 }).toContain('waits for');
    await expect.poll(() => page.getByTestId('timeline').locator('tr').count(), { timeout: 10_000 }).toBeGreaterThan(3);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'failed-node.png'), fullPage: true });
  });

  test('pause, then abort a session from its page', async () => {
    const { page } = w;
    await page.getByRole('link', { name: 'New session' }).first().click();
    await page.getByLabel('limit').fill('compute-b');
    await page.getByLabel('name').fill('console-abort');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.getByRole('button', { name: /^Start reboot of/ }).click();
    // A session pauses once it runs (setup has taken its nodes); before that the console offers no Pause.
    await page.waitForSelector('[data-testid=session-page][data-status=RUNNING]', { timeout: 60_000 });
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor({ timeout: 15_000 });
    expect((await w.gql('{ session(name: "console-abort") { paused } }')).session.paused).toBe(true);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Abort' }).click();
    await waitFor(
      async () => (await w.gql('{ session(name: "console-abort") { aborted status { status } } }')).session.aborted,
      'session aborted',
      30_000,
    );
    await page.waitForSelector('[data-testid=session-page][data-status=COMPLETE]', { timeout: 60_000 });
    await expect.poll(() => page.getByTestId('failure-groups').textContent(), { timeout: 30_000 }).toContain('aborted');
  }, 180_000);

  test('a viewer sees no buttons it cannot use; a tenant sees only its nodes', async () => {
    const { page } = w;
    const viewer = (await createApiToken(w.db.db, { role: 'viewer', subject: 'watcher' })).token;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token or OIDC access token').fill(viewer);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByTestId('whoami').textContent(), { timeout: 15_000 }).toContain('viewer');
    await page.goto(`${w.baseUrl}/#/sessions`);
    await page.getByTestId('session-console-reboot').waitFor({ timeout: 15_000 });
    expect(await page.getByRole('button', { name: /Pause|Resume|Abort/ }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New session' }).count()).toBe(0);

    const mine = ['x1001c0s0b0n0', 'x1001c0s0b0n1', 'x1001c0s0b1n0'];
    await w.gql('mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: mine });
    const tenant = (await createApiToken(w.db.db, { role: 'viewer', subject: 'acme-watcher', tenant: 'acme' })).token;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token or OIDC access token').fill(tenant);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.goto(`${w.baseUrl}/#/`);
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${mine.length}"]`, { timeout: 15_000 });
  });
});
