/**
 * The node reporter over HTTP: reportOnce against a stand-in GraphQL endpoint that answers like
 * bootorch (accepted, refused mid-transition, errors), the agent loop's backoff and re-report, and
 * the simulator's nodes reporting over HTTP when the server is started with `report`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REPORT_MUTATION,
  ReportError,
  agentConfigFromEnv,
  graphqlUrl,
  parseCmdline,
  reportOnce,
  startReporterAgent,
} from '../../src/reporter/agent.ts';
import { startSimServer } from '../../src/sim/server.ts';
import { SimWorld } from '../../src/sim/world.ts';

interface Seen {
  auth?: string;
  query: string;
  variables: { id: string; token: string };
}
const seen: Seen[] = [];
/** What the stand-in answers next (a queue; empty = accepted). */
const script: ((res: http.ServerResponse) => void)[] = [];
let url = '';
let server: http.Server;

const accepted = (res: http.ServerResponse) => reply(res, 200, { data: { reportBootState: { __typename: 'BootStateReported' } } });
const refused = (res: http.ServerResponse) =>
  reply(res, 200, { data: { reportBootState: { __typename: 'ReportRefused', code: 'CONFLICT', message: 'mid-transition' } } });
function reply(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.url !== '/graphql') return reply(res, 404, {});
      const b = JSON.parse(raw);
      seen.push({ auth: req.headers.authorization, query: b.query, variables: b.variables });
      (script.shift() ?? accepted)(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('node reporter', () => {
  it('reportOnce sends the reportBootState mutation with the bearer token', async () => {
    await reportOnce({ url, xname: 'x1000c0s0b0n0', bssToken: 'tok', authToken: 'node-secret' });
    expect(seen.at(-1)).toEqual({ auth: 'Bearer node-secret', query: REPORT_MUTATION, variables: { id: 'x1000c0s0b0n0', token: 'tok' } });
    expect(graphqlUrl('http://h:4000')).toBe('http://h:4000/graphql');
    expect(graphqlUrl('http://h:4000/graphql')).toBe('http://h:4000/graphql');
  });

  it('reportOnce throws on refusal, GraphQL errors and 5xx', async () => {
    script.push(refused);
    await expect(reportOnce({ url, xname: 'x', bssToken: 't' })).rejects.toMatchObject({ code: 'CONFLICT' });
    script.push((res) => reply(res, 200, { errors: [{ message: 'not allowed', extensions: { code: 'FORBIDDEN' } }] }));
    await expect(reportOnce({ url, xname: 'x', bssToken: 't' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    script.push((res) => reply(res, 503, { message: 'busy' }));
    const e = await reportOnce({ url, xname: 'x', bssToken: 't' }).catch((x) => x);
    expect(e).toBeInstanceOf(ReportError);
    expect(e.status).toBe(503);
  });

  it('the agent retries with min(2 x attempt, 30) s backoff, then re-reports every 0.75 x bos_update_frequency', async () => {
    const waits: number[] = [];
    const n = seen.length;
    script.push(refused, (res) => reply(res, 500, {}), accepted);
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'reporter-'));
    writeFileSync(join(dir, 'cmdline'), 'console=ttyS0 xname=x1000c0s1b0n0 nid=5 bss_referral_token=abc bos_update_frequency=4h quiet\n');
    const cfg = agentConfigFromEnv({ BOOTORCH_URL: url, BOOTORCH_TOKEN: 'tkn' }, join(dir, 'cmdline'));
    expect(cfg).toMatchObject({ xname: 'x1000c0s1b0n0', bssToken: 'abc', updateFrequencySeconds: 14_400 });
    // 1 "second" = 0.01 ms; log lines carry the chosen backoff.
    let third!: () => void;
    const reported3 = new Promise<void>((resolve) => (third = resolve));
    const agent = startReporterAgent(cfg, {
      msPerSecond: 0.01,
      random: () => 0.5,
      onReport: (k) => k === 3 && third(),
      log: (m) => waits.push(Number(/in (\d+) s/.exec(m)![1])),
    });
    await reported3;
    agent.stop();
    await agent.done;
    expect(waits).toEqual([2, 4]);
    expect(seen.slice(n).every((s) => s.variables.id === 'x1000c0s1b0n0' && s.auth === 'Bearer tkn')).toBe(true);
    expect(agentConfigFromEnv({ BOOTORCH_URL: url, NODE_IDENTITY: 'x3000c0s1b0n0' }, join(dir, 'cmdline')).xname).toBe('x3000c0s1b0n0');
    expect(() => agentConfigFromEnv({}, join(dir, 'cmdline'))).toThrow(/BOOTORCH_URL/);
    expect(parseCmdline('a=1 b c=x=y')).toEqual({ a: '1', c: 'x=y' });
  });

  it('simulated nodes report over HTTP when the sim server is told where bootorch is', async () => {
    const world = new SimWorld({ nodes: 4, reportRetryBaseMs: 1, reportRetryMaxMs: 2 });
    const sim = await startSimServer(world, { report: { url, authToken: (x) => `node-${x}` } });
    try {
      const n = seen.length;
      script.push(refused);
      const token = world.setBootParameters({ hosts: ['x1000c0s0b0n0'], kernel: 'k', initrd: 'i', params: 'p' });
      world.transition('On', ['x1000c0s0b0n0']);
      await world.waitFor('report', (r) => r.id === 'x1000c0s0b0n0', 3000);
      expect(seen.slice(n).map((s) => [s.variables.id, s.variables.token, s.auth])).toEqual([
        ['x1000c0s0b0n0', token, 'Bearer node-x1000c0s0b0n0'],
        ['x1000c0s0b0n0', token, 'Bearer node-x1000c0s0b0n0'],
      ]);
    } finally {
      await sim.close();
      world.close();
    }
  });
});
