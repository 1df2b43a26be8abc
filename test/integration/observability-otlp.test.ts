/**
 * Tracing as a deployment turns it on: a process with OTEL_EXPORTER_OTLP_ENDPOINT sends its spans as
 * OTLP/HTTP (JSON) to <endpoint>/v1/traces, here a tiny receiver in the test; without the
 * variable tracing stays off.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.ts';

const SCRIPT = `
import { startTracing, inSpan, flushTracing } from './src/observability/tracing.ts';
const on = startTracing('worker');
await inSpan('tick session-setup', { 'bootorch.operator': 'session-setup' }, () => inSpan('pcs transition', {}, async () => {}));
await flushTracing();
process.stdout.write(on ? 'tracing on' : 'tracing off');
`;

const received: { path: string; type: string; body: Buffer }[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      received.push({ path: req.url ?? '', type: String(req.headers['content-type']), body: Buffer.concat(parts) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function run(env: Record<string, string | undefined>): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SCRIPT], {
      cwd: ROOT,
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: undefined, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined, ...env },
    });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
  });
}

describe('OTLP export', () => {
  it('sends the spans to <endpoint>/v1/traces when OTEL_EXPORTER_OTLP_ENDPOINT is set', async () => {
    expect(await run({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_SERVICE_NAME: 'bootorch-test' })).toContain('tracing on');
    expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
    expect(received[0]!.type).toMatch(/json/);
    const body = JSON.parse(received[0]!.body.toString('utf8'));
    const rs = body.resourceSpans[0];
    const attrs = Object.fromEntries(rs.resource.attributes.map((a: any) => [a.key, a.value.stringValue]));
    expect(attrs).toMatchObject({ 'service.name': 'bootorch-test', 'bootorch.role': 'worker' });
    const spans = rs.scopeSpans.flatMap((s: any) => s.spans);
    const byName = new Map(spans.map((s: any) => [s.name, s]));
    const tick: any = byName.get('tick session-setup');
    const call: any = byName.get('pcs transition');
    expect(call.parentSpanId).toBe(tick.spanId);
    expect(call.traceId).toBe(tick.traceId);
  }, 60_000);

  it('stays off without an endpoint', async () => {
    received.length = 0;
    expect(await run({})).toContain('tracing off');
    expect(received).toEqual([]);
  }, 60_000);
});
