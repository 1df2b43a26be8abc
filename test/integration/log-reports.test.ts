/**
 * Node reports in the API's log: at debug, each report writes one line that names the node (`xname`),
 * its session (`session`, when the node has one) and the request's trace id (`traceId`), on the fast
 * path (src/api/fast-reports.ts) and through Apollo alike; at info, a report writes nothing. The trace
 * id is the caller's W3C `traceparent` when it sends one, else one made for the request; with tracing
 * on, it is the request span's, and that span joins the caller's trace.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { testAuth, type TestAuth } from '../helpers/auth.ts';
import { recordingScheduler } from './api-harness.ts';
import { startApiServer, type ApiServer } from '../../src/api/server.ts';
import { createNodeToken } from '../../src/auth/index.ts';
import { createReportBatcher } from '../../src/engine/reports.ts';
import { observeReports } from '../../src/observability/reports.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { startTracing } from '../../src/observability/tracing.ts';
import { REPORT_MUTATION } from '../../src/reporter/agent.ts';
import { fastReportCounts } from '../../src/api/fast-reports.ts';
import { logLines, type LogLine } from '../helpers/log-lines.ts';

const { lines, sink } = logLines();

let db: TestDb;
let auth: TestAuth;
let log: Logger;
let server: ApiServer;
const A = 'x3000c0s19b1n0';
const B = 'x3000c0s19b1n1';
const tokens: Record<string, string> = {};
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`;

beforeAll(async () => {
  db = await freshDb();
  auth = await testAuth(db.db);
  log = createLogger({ level: 'debug', role: 'api', pretty: false, destination: sink });
  const scheduler = recordingScheduler();
  server = await startApiServer({
    db: db.db,
    scheduler,
    port: 0,
    host: '127.0.0.1',
    auth: auth.auth,
    logger: log,
    reports: observeReports(createReportBatcher(db.db, scheduler)),
  });
  await db.db.execute(sql`insert into boot_artifacts (token, kernel, kernel_parameters, initrd) values ('tok-a', 'k', 'p', 'i')`);
  for (const id of [A, B]) tokens[id] = (await createNodeToken(db.db, id)).token;
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});
beforeEach(async () => {
  log.level = 'debug';
  await db.db.execute(sql`delete from components`);
  // A is in session s1; B is in none.
  await db.db.execute(sql`insert into components (id, session) values (${A}, 's1'), (${B}, '')`);
});

/** One report by the node itself, by the fast path or through Apollo; the lines the request wrote. */
async function report(path: 'fast' | 'apollo', id: string, headers: Record<string, string> = {}) {
  const served = fastReportCounts.served;
  const from = lines.length;
  // `extensions` makes a body the fast path leaves to Apollo (it serves plain documents only).
  const body = { query: REPORT_MUTATION, variables: { id, token: 'tok-a' }, ...(path === 'apollo' ? { extensions: {} } : {}) };
  const res = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[id]}`, ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { data: { reportBootState: { __typename: string } } };
  expect(answer.data.reportBootState.__typename).toBe('BootStateReported');
  expect(fastReportCounts.served - served, 'the path taken').toBe(path === 'fast' ? 1 : 0);
  return { reqId: res.headers.get('x-request-id'), lines: lines.slice(from) };
}

const reportLines = (ls: LogLine[]) => ls.filter((l) => l.xname !== undefined && l.session !== undefined && l.traceId !== undefined);

describe.each(['fast', 'apollo'] as const)('a node report by the %s path', (path) => {
  it('at debug: one line with the xname, the session and a trace id', async () => {
    const r = await report(path, A);
    expect(reportLines(r.lines)).toEqual([
      expect.objectContaining({
        level: 20,
        xname: A,
        session: 's1',
        outcome: 'accepted',
        reqId: r.reqId,
        traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      }),
    ]);
    // Every line the request wrote (its audit line too) names the node and carries the same trace id.
    const traceId = reportLines(r.lines)[0]!.traceId;
    for (const l of r.lines) expect(l, JSON.stringify(l)).toMatchObject({ xname: A, traceId, reqId: r.reqId });
  });

  it("the caller's traceparent gives the trace id; a node in no session has no session field", async () => {
    const r = await report(path, B, { traceparent: TRACEPARENT });
    const mine = r.lines.filter((l) => l.msg.startsWith('report'));
    expect(mine).toEqual([expect.objectContaining({ level: 20, xname: B, traceId: TRACE })]);
    expect(mine[0]).not.toHaveProperty('session');
  });

  it('two requests: two trace ids', async () => {
    const [a, b] = [await report(path, A), await report(path, A)];
    expect(reportLines(a.lines)[0]!.traceId).not.toBe(reportLines(b.lines)[0]!.traceId);
  });

  it('at info: no line', async () => {
    log.level = 'info';
    expect((await report(path, A)).lines).toEqual([]);
  });
});

describe('with tracing on', () => {
  it("the fast path's request span joins the caller's trace, and the report line carries its ids", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing('test', { exporter });
    try {
      const r = await report('fast', A, { traceparent: TRACEPARENT });
      const spans = exporter.getFinishedSpans();
      const request = spans.find((s) => s.name === 'graphql mutation reportBootState');
      expect(request, spans.map((s) => s.name).join(', ')).toBeDefined();
      expect(request!.spanContext().traceId).toBe(TRACE);
      const reportSpan = spans.find((s) => s.name === 'report');
      expect(reportSpan?.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
      expect(reportLines(r.lines)).toEqual([
        expect.objectContaining({ xname: A, session: 's1', traceId: TRACE, spanId: expect.any(String) }),
      ]);
      // A caller's unsampled flag (-00) gives the trace id, not the decision: the request is recorded.
      exporter.reset();
      await report('fast', A, { traceparent: TRACEPARENT.replace(/-01$/, '-00') });
      const unsampled = exporter.getFinishedSpans().find((s) => s.name === 'graphql mutation reportBootState');
      expect(unsampled?.spanContext().traceId).toBe(TRACE);
    } finally {
      await tracing?.shutdown();
    }
  });
});
