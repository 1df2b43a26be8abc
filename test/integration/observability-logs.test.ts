/**
 * Request ids in the API's logs: the caller's `x-request-id` (when sane) or a new one is answered in
 * the response header and carried by every log line the request writes (here: the audit line of a
 * mutation). And the loggers the roles make: JSON lines with the role, readable only when asked.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { startHarness, type Harness } from './api-harness.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { logLines } from '../helpers/log-lines.ts';

const { lines, sink } = logLines();
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ logger: pino({ level: 'info' }, sink) });
});
afterAll(async () => {
  await h?.close();
});

async function mutate(headers: Record<string, string>): Promise<{ id: string | null; audit: any }> {
  const res = await fetch(h.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.auth.adminToken}`, ...headers },
    body: JSON.stringify({ query: 'mutation { deleteSessionTemplate(name: "nope") }' }),
  });
  await res.json();
  const id = res.headers.get('x-request-id');
  return { id, audit: lines.filter((l) => (l.audit as { field?: string } | undefined)?.field === 'deleteSessionTemplate').at(-1) };
}

describe('request ids', () => {
  it("keeps a sane caller id, answers it, and logs it on the request's lines", async () => {
    const r = await mutate({ 'x-request-id': 'ci-run-42.7' });
    expect(r.id).toBe('ci-run-42.7');
    expect(r.audit.reqId).toBe('ci-run-42.7');
  });

  it('makes one when the caller gives none or an unusable one', async () => {
    const none = await mutate({});
    expect(none.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(none.audit.reqId).toBe(none.id);
    const bad = await mutate({ 'x-request-id': `${'x'.repeat(80)} <script>` });
    expect(bad.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(bad.audit.reqId).toBe(bad.id);
    expect(bad.id).not.toBe(none.id);
  });
});

describe('role loggers', () => {
  const capture = () => {
    let text = '';
    return {
      stream: new Writable({
        write(c, _e, done) {
          text += String(c);
          done();
        },
      }),
      text: () => text,
    };
  };

  it('write one JSON object per line with the role', () => {
    const out = capture();
    createLogger({ level: 'info', role: 'worker', pretty: false, destination: out.stream }).info(
      { session: 's1', nodes: 3 },
      'session set up',
    );
    expect(JSON.parse(out.text())).toMatchObject({ role: 'worker', session: 's1', nodes: 3, msg: 'session set up' });
  });

  it('write readable lines when asked (the dev role on a terminal)', () => {
    const out = capture();
    createLogger({ level: 'info', role: 'dev', pretty: true, destination: out.stream }).info({ session: 's1', nodes: 3 }, 'session set up');
    expect(out.text()).toMatch(/INFO.*session set up/);
    expect(out.text()).toMatch(/"session":"s1"/);
    expect(() => JSON.parse(out.text())).toThrow();
  });
});
