/**
 * How the API serves the console (src/api/console.ts): `/` is the console for a browser and BOS's
 * versions document for everyone else; the built files under /assets; the dev token only in dev auth
 * mode, only to a loopback client that came straight in.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { consoleRouter } from '../../src/api/console.ts';
import type { Authenticator } from '../../src/auth/index.ts';

const dist = mkdtempSync(path.join(tmpdir(), 'bootorch-console-dist-'));
const servers: import('node:http').Server[] = [];

async function serve(authenticator?: Partial<Authenticator>, distDir = dist): Promise<string> {
  const app = express();
  app.use(consoleRouter({ dist: distDir, authenticator: authenticator as Authenticator }));
  app.get('/', (_req, res) => {
    res.json([{ major: '0', links: [] }]);
  }); // stands in for the BOS door
  const s = app.listen(0, '127.0.0.1');
  servers.push(s);
  await new Promise((r) => s.once('listening', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

beforeAll(() => {
  mkdirSync(path.join(dist, 'assets'));
  writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(dist, 'assets', 'index-abc.js'), 'console.log(1)');
});
afterAll(() => {
  for (const s of servers) s.close();
  rmSync(dist, { recursive: true, force: true });
});

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('the console on the API origin', () => {
  test('/ is the console for a browser, BOS versions for JSON clients and for no Accept at all', async () => {
    const base = await serve();
    const html = await fetch(`${base}/`, { headers: { accept: BROWSER } });
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<div id="root">');
    expect(html.headers.get('vary')).toContain('Accept');
    for (const accept of ['application/json', '*/*', '']) {
      const r = await fetch(`${base}/`, { headers: accept ? { accept } : {} });
      expect(await r.json(), accept).toEqual([{ major: '0', links: [] }]);
    }
  });

  test('built files are served with a long cache; an unknown one is a 404', async () => {
    const base = await serve();
    const js = await fetch(`${base}/assets/index-abc.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${base}/assets/nope.js`)).status).toBe(404);
  });

  test('an unbuilt console says how to build it', async () => {
    const base = await serve(undefined, path.join(dist, 'missing'));
    const r = await fetch(`${base}/`, { headers: { accept: BROWSER } });
    expect(r.status).toBe(503);
    expect(await r.text()).toContain('npm run build:web');
  });

  test('the dev token: dev mode and a direct loopback client only', async () => {
    const dev = await serve({ mode: 'dev', devAdminToken: 'bto_dev' });
    const ok = await fetch(`${dev}/console/dev-token`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ token: 'bto_dev' });
    expect(ok.headers.get('cache-control')).toBe('no-store');
    expect((await fetch(`${dev}/console/dev-token`, { headers: { 'x-forwarded-for': '203.0.113.9' } })).status).toBe(404);
    expect((await fetch(`${dev}/console/dev-token`, { headers: { forwarded: 'for=203.0.113.9' } })).status).toBe(404);
    const tokens = await serve({ mode: 'tokens' });
    expect((await fetch(`${tokens}/console/dev-token`)).status).toBe(404);
    expect((await fetch(`${await serve()}/console/dev-token`)).status).toBe(404);
  });
});
