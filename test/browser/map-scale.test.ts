/**
 * The map at 100,000 nodes (BENCH_SCALE_NODES), browser side only: the built console is served as the
 * API serves it (src/api/console.ts), and the browser's GraphQL traffic is answered by the test
 * (playwright's page.route for HTTP, routeWebSocket for graphql-ws) with a synthetic machine and a
 * stream of live events, as fast as a reboot of the whole machine would send them. A real 100,000-node
 * backend does not fit on the 2-core machine beside the browser; what is measured here is what the
 * browser does with such a machine: the first full map, frame times under the event stream, hover.
 *
 *   BOOTORCH_BROWSER_TESTS=1 npx vitest run test/browser/map-scale.test.ts
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { consoleRouter } from '../../src/api/console.ts';
import { percentile } from '../helpers/processes.ts';
import { BROWSER_TESTS, SCREENSHOTS, buildConsole, launchChromium, waitFor } from './harness.ts';

const NODES = Number(process.env.BENCH_SCALE_NODES ?? 100_000);
const EVENTS = 40_000;
const ids: string[] = [];
for (let cab = 1000; ids.length < NODES; cab++) {
  for (let c = 0; c < 8; c++)
    for (let s = 0; s < 8; s++) for (let b = 0; b < 2; b++) for (let n = 0; n < 2; n++) ids.push(`x${cab}c${c}s${s}b${b}n${n}`);
}
ids.length = NODES;

let server: Server;
let browser: BrowserContext;
let userDataDir: string;

describe.skipIf(!BROWSER_TESTS)(`map at ${NODES} nodes (synthetic API)`, () => {
  beforeAll(async () => {
    buildConsole();
    const app = express();
    app.use(consoleRouter());
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    userDataDir = mkdtempSync(path.join(tmpdir(), 'bootorch-chromium-'));
    browser = await launchChromium(userDataDir);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  });

  test('first full map, frames under a stream of live events, hover', async () => {
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.route('**/graphql', async (route) => {
      const body = route.request().postDataJSON() as { operationName: string; variables: { first?: number; after?: string | null } };
      let data: unknown = null;
      if (body.operationName === 'ConsoleWhoami' || !body.operationName)
        data = { whoami: { subject: 'bench', role: 'VIEWER', tenant: null, via: 'API_TOKEN' } };
      else if (body.operationName === 'ConsoleTemplates') data = { sessionTemplates: [] };
      else if (body.operationName === 'ConsoleMachineMap') {
        const zeros = new Array<number>(NODES).fill(0);
        data = {
          machineMap: {
            cursor: '0',
            ids,
            status: zeros,
            statuses: ['STABLE'],
            phase: zeros,
            phases: ['NONE'],
            session: zeros,
            sessions: [''],
            failureReason: zeros,
            failureReasons: [''],
          },
        };
      } else if (body.operationName === 'ConsoleNodeTable') {
        const at = new Date().toISOString();
        data = {
          components: {
            nodes: ids.slice(0, 50).map((id) => ({
              id,
              enabled: false,
              session: '',
              failureReason: '',
              error: '',
              updatedAt: at,
              status: { phase: 'NONE', status: 'STABLE' },
            })),
            pageInfo: { hasNextPage: true, endCursor: '50' },
            totalCount: NODES,
          },
        };
      }
      await route.fulfill({
        contentType: 'application/json',
        body: JSON.stringify(data ? { data } : { errors: [{ message: `not in this bench: ${body.operationName}` }] }),
      });
    });
    let sent = 0;
    let subscribed: (() => void) | undefined;
    const streamReady = new Promise<void>((resolve) => {
      subscribed = resolve;
    });
    let stream: () => void = () => {};
    await page.routeWebSocket('**/graphql', (ws) => {
      ws.onMessage((raw) => {
        const m = JSON.parse(String(raw)) as { type: string; id?: string };
        if (m.type === 'connection_init') ws.send(JSON.stringify({ type: 'connection_ack' }));
        if (m.type !== 'subscribe') return;
        // Started by the test once the full map is drawn: a reboot's worth of transitions, 2,000 every 50 ms, as
        // componentEventBatches sends them (at most 1,000 events to a message).
        const statuses = ['POWER_OFF_GRACEFULLY_CALLED', 'POWER_ON_CALLED', 'CONFIGURING', 'STABLE'];
        const push = () => {
          for (let msg = 0; msg < 2 && sent < EVENTS; msg++) {
            const events = [];
            for (let k = 0; k < 1000 && sent < EVENTS; k++, sent++) {
              events.push({
                cursor: String(sent + 1),
                at: new Date().toISOString(),
                componentId: ids[(sent * 7919) % NODES],
                session: 'bench',
                kind: 'transition',
                toPhase: null,
                toStatus: statuses[Math.floor(sent / 1000) % 4],
                reason: null,
                error: null,
              });
            }
            const componentEventBatches = { cursor: String(sent), events };
            ws.send(JSON.stringify({ id: m.id, type: 'next', payload: { data: { componentEventBatches } } }));
          }
          if (sent < EVENTS) setTimeout(push, 50);
        };
        stream = push;
        subscribed!();
      });
    });
    await page.addInitScript(() => sessionStorage.setItem('bootorch.token', 'bench'));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const firstFullMapMs = await page
      .waitForFunction(() => (window as any).__bootorchMap?.firstFullMapMs, undefined, { timeout: 120_000 })
      .then((h) => h.jsonValue() as Promise<number>);
    await page.waitForSelector(`[data-testid=machine-map][data-nodes="${NODES}"]`);
    await page.evaluate(() => {
      const gaps: number[] = [];
      (window as any).__frameGaps = gaps;
      let last = performance.now();
      const tick = (t: number) => {
        gaps.push(t - last);
        last = t;
        (window as any).__frameGaps = gaps;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const drawsBefore = await page.evaluate(() => (window as any).__bootorchMap.drawMs.length as number);
    await streamReady;
    stream();
    await waitFor(
      async () => sent >= EVENTS && (await page.evaluate(() => (window as any).__bootorchMap.liveEvents as number)) >= EVENTS,
      `${EVENTS} live events applied`,
      180_000,
    );
    const gaps = await page.evaluate(() => (window as any).__frameGaps as number[]);
    const draws = (await page.evaluate(() => (window as any).__bootorchMap.drawMs as number[])).slice(drawsBefore);
    // 7919 is prime to NODES, so each event of the stream moved a node of its own: event 38,500's node was
    // moved once, to CONFIGURING (events 38,000-38,999), and the map must show exactly that.
    const moved = ids[(38_500 * 7919) % NODES]!;
    const locate = async () => (await page.evaluate((id) => (window as any).__bootorchMap.locate(id), moved)) as { x: number; y: number };
    // Zoomed out, a node is a fraction of a pixel beside the map: zoom in around it first (wheel).
    let at = await locate();
    await page.mouse.move(at.x, at.y);
    await page.mouse.wheel(0, -1500);
    at = await locate();
    await page.mouse.move(at.x, at.y);
    await expect.poll(() => page.getByTestId('map-tip').textContent(), { timeout: 10_000 }).toContain(moved);
    expect(await page.getByTestId('map-tip').textContent()).toContain('configuring');
    const figures = {
      nodes: NODES,
      firstFullMapMs: Math.round(firstFullMapMs),
      liveEvents: EVENTS,
      frames: gaps.length,
      frameIntervalMs: { p50: +percentile(gaps, 50).toFixed(1), p95: +percentile(gaps, 95).toFixed(1), max: +Math.max(...gaps).toFixed(1) },
      drawMs: { p50: +percentile(draws, 50).toFixed(2), p95: +percentile(draws, 95).toFixed(2), max: +Math.max(...draws).toFixed(2) },
    };
    process.stdout.write(`\nmap scale: ${JSON.stringify(figures)}\n`);
    mkdirSync(SCREENSHOTS, { recursive: true });
    writeFileSync(path.join(SCREENSHOTS, `map-scale-${NODES}.json`), `${JSON.stringify(figures, null, 2)}\n`);
    await page.screenshot({ path: path.join(SCREENSHOTS, `map-${NODES}.png`) });
    // The frame times are figures (README, docs/screenshots/map-scale-*.json), not a pass mark: on a
    // shared 2-core CI machine they follow the load (p50 16.7 ms quiet, 100 ms in a CI run at load 10+).
    expect(gaps.length, 'frames drawn while the events arrived').toBeGreaterThan(0);
  }, 300_000);
});
