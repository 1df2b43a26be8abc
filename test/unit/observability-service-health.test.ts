/**
 * Outages of outside services in two log lines (src/observability/service-health.ts), and the trace id
 * on every log line written inside a span (src/observability/logging.ts).
 */
import { describe, expect, it } from 'vitest';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { ServiceError } from '../../src/adapters/errors.ts';
import { ServiceHealth } from '../../src/observability/service-health.ts';
import { createLogger } from '../../src/observability/logging.ts';
import { inSpan, startTracing } from '../../src/observability/tracing.ts';
import { logLines } from '../helpers/log-lines.ts';

function capture() {
  const { lines, sink } = logLines();
  return { lines, log: createLogger({ level: 'debug', role: 'test', pretty: false, destination: sink }) };
}

const down = new ServiceError('pcs', 'POST /transitions', 'connection failed: ECONNREFUSED');

describe('service health', () => {
  it('says once that a service fails and once that it recovered, however many calls fail between', () => {
    const { lines, log } = capture();
    let now = 0;
    const h = new ServiceHealth(log, { settleMs: 10_000, now: () => now });
    for (let i = 0; i < 50; i++) {
      now += 1000;
      h.failed('pcs', 'transition', down);
    }
    expect(h.failing().get('pcs')).toBe(1000);
    now += 20_000;
    h.succeeded('pcs');
    h.succeeded('pcs');
    expect(lines.map((l) => l.msg)).toEqual([
      'pcs is failing: PCS POST /transitions failed: connection failed: ECONNREFUSED',
      'pcs recovered: it failed for 49 s (50 calls failed)',
    ]);
    expect(lines[0]).toMatchObject({ level: 40, service: 'pcs', operation: 'transition' });
    expect(lines[1]).toMatchObject({ level: 30, service: 'pcs', failedCalls: 50, failedSeconds: 49 });
  });

  it('a service answering one call in two is one outage; three successes in a row end it', () => {
    const { lines, log } = capture();
    let now = 0;
    const h = new ServiceHealth(log, { settleMs: 10_000, now: () => now });
    for (let i = 0; i < 20; i++) {
      now += 100;
      h.failed('cfs', 'getComponents', new Error('socket hang up'));
      h.succeeded('cfs');
    }
    expect(lines.length).toBe(1);
    // The loop's last call was the first success in a row: one more is two, still failing.
    h.succeeded('cfs');
    expect(lines.length).toBe(1);
    h.succeeded('cfs');
    expect(lines.map((l) => l.msg)).toEqual(['cfs is failing: socket hang up', 'cfs recovered: it failed for 2 s (20 calls failed)']);
  });

  it('a refusal the service meant (4xx, not transient) says nothing about its health', () => {
    const { lines, log } = capture();
    const h = new ServiceHealth(log);
    h.failed('hsm', 'getNodes', new ServiceError('hsm', 'GET /hsm/v2/State/Components', 'not found', 404, false));
    expect(lines).toEqual([]);
    expect(h.failing().size).toBe(0);
  });
});

describe('log lines inside a span', () => {
  it('carry the trace id and span id; lines outside any span carry none', async () => {
    const tracing = startTracing('test', { exporter: new InMemorySpanExporter() });
    try {
      const { lines, log } = capture();
      let traceId = '';
      await inSpan('tick status', {}, async (span) => {
        traceId = span.spanContext().traceId;
        log.info('inside');
      });
      log.info('outside');
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(lines[0]).toMatchObject({ msg: 'inside', traceId });
      expect(lines[0]!.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(lines[1]!.traceId).toBeUndefined();
    } finally {
      await tracing?.shutdown();
    }
  });
});
