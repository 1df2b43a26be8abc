/**
 * One trace per action: the API request that creates a session, the session's setup on the engine,
 * the action batches that act on its nodes (the trace context travels in the session row and in the
 * action jobs' data) and the outside calls they make are one trace, with spans naming the session and
 * the nodes. Real PostgreSQL, the in-process engine and API, an in-memory span exporter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startTracing, type Tracing } from '../../src/observability/tracing.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';

const exporter = new InMemorySpanExporter();
let tracing: Tracing | undefined;
let c: Cluster;
let api: ClusterApi;

beforeAll(async () => {
  tracing = startTracing('test', { exporter });
  c = await startCluster({ world: { nodes: 4, initial: { power: 'on' } }, instrument: true });
  api = await startClusterApi(c);
});
afterAll(async () => {
  await api?.api.close();
  await c?.close();
  await tracing?.shutdown();
});

const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('traces', () => {
  it('the request, the setup, the action batches and their outside calls of one session are one trace', async () => {
    await c.template('t');
    exporter.reset();
    await api.gql('mutation { createSession(input: { operation: REBOOT, templateName: "t", name: "traced" }) { session { name } } }');
    await c.waitForSession('traced', 45_000);
    const spans = exporter.getFinishedSpans();
    const request = spans.find((s) => s.name === 'graphql mutation createSession');
    expect(request, spans.map((s) => s.name).join(', ')).toBeDefined();
    const traceId = request!.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
    const setup = inTrace.find((s) => s.name === 'session setup');
    expect(setup?.attributes['bootorch.session']).toBe('traced');
    const batches = inTrace.filter((s) => s.name.startsWith('action '));
    const actions = new Set(batches.map((s) => s.name));
    expect(actions).toContain('action powering_off_gracefully');
    expect(actions).toContain('action powering_on');
    for (const b of batches) {
      expect(b.attributes['bootorch.session']).toBe('traced');
      expect(String(b.attributes['bootorch.xnames']).split(',').length).toBe(b.attributes['bootorch.components']);
    }
    // The outside calls of a batch are its children: PCS was asked to power the nodes on in this trace.
    const calls = inTrace.filter((s) => batches.some((b) => b.spanContext().spanId === parentOf(s)));
    expect(calls.map((s) => s.name)).toEqual(expect.arrayContaining(['pcs transition']));
  });
});
