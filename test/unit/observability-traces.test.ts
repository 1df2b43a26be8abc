/**
 * Outside calls measured at the ports, and traces from a tick to the call: the simulated adapters,
 * wrapped once as the factory does, count each call by service, operation and outcome with its
 * latency; with tracing on (an in-memory exporter from the OTel SDK) the call's span is a child of the
 * action batch's, which is a child of the tick's: one trace from the job to the call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createSimAdapters } from '../../src/adapters/factory.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { instrumentAdapters } from '../../src/observability/ports.ts';
import { observeBatch, observeTick } from '../../src/observability/engine.ts';
import { local, value } from '../helpers/metrics.ts';
import { startTracing, type Tracing } from '../../src/observability/tracing.ts';

const exporter = new InMemorySpanExporter();
let tracing: Tracing | undefined;
let world: SimWorld;
const log = pino({ level: 'silent' });

const sample = async (name: string, labels: Record<string, string>) => value(await local(), name, labels);

beforeAll(() => {
  tracing = startTracing('test', { exporter });
  world = new SimWorld({ nodes: 8 });
});
afterAll(async () => {
  world.close();
  await tracing?.shutdown();
});

describe('outside calls at the ports', () => {
  it('counts calls by service, operation and outcome, with a latency histogram; an outage counts as errors', async () => {
    const adapters = instrumentAdapters(createSimAdapters(world));
    const ids = world.ids().slice(0, 2);
    const ok0 = await sample('bootorch_outside_calls_total', { service: 'pcs', operation: 'powerStatus', outcome: 'ok' });
    const err0 = await sample('bootorch_outside_calls_total', { service: 'pcs', operation: 'powerStatus', outcome: 'error' });
    await adapters.power.powerStatus(ids);
    world.faults.setService('pcs', { down: true });
    await expect(adapters.power.powerStatus(ids)).rejects.toThrow(/PCS/);
    await expect(adapters.power.powerStatus(ids)).rejects.toThrow(/PCS/);
    world.faults.setService('pcs', { down: false });
    expect(await sample('bootorch_outside_calls_total', { service: 'pcs', operation: 'powerStatus', outcome: 'ok' })).toBe(ok0 + 1);
    expect(await sample('bootorch_outside_calls_total', { service: 'pcs', operation: 'powerStatus', outcome: 'error' })).toBe(err0 + 2);
    expect(
      await sample('bootorch_outside_call_duration_seconds_count', { service: 'pcs', operation: 'powerStatus', outcome: 'error' }),
    ).toBe(err0 + 2);
    await adapters.inventory.listNodes();
    expect(await sample('bootorch_outside_calls_total', { service: 'hsm', operation: 'listNodes', outcome: 'ok' })).toBeGreaterThanOrEqual(
      1,
    );
    // configure() and the world pass through; wrapping twice does not count twice.
    expect(adapters.world).toBe(world);
    const twice = instrumentAdapters(adapters);
    const before = await sample('bootorch_outside_calls_total', { service: 'hsm', operation: 'groups', outcome: 'ok' });
    await twice.inventory.groups();
    expect(await sample('bootorch_outside_calls_total', { service: 'hsm', operation: 'groups', outcome: 'ok' })).toBe(before + 1);
  });

  it('a port that names its own service is counted under that name', async () => {
    const adapters = createSimAdapters(world);
    const redfish = Object.assign(Object.create(adapters.power), { serviceName: 'redfish' });
    const wrapped = instrumentAdapters({ ...adapters, power: redfish });
    await wrapped.power.powerStatus(world.ids().slice(0, 1));
    expect(await sample('bootorch_outside_calls_total', { service: 'redfish', operation: 'powerStatus', outcome: 'ok' })).toBe(1);
  });
});

describe('traces', () => {
  it('tick -> action batch -> outside call, one trace; a failed call marks its span', async () => {
    exporter.reset();
    const adapters = instrumentAdapters(createSimAdapters(world));
    const ids = world.ids().slice(0, 3);
    world.faults.setService('bss', { down: true });
    const problems = await observeTick('power-on', () =>
      observeBatch(
        log,
        'powering_on',
        ids.length,
        0,
        async () => {
          await adapters.power.powerStatus(ids);
          try {
            await adapters.bootParams.setBootParameters({ hosts: ids, kernel: 'k', initrd: 'i', params: 'p' });
            return [];
          } catch {
            return ids.map((id) => ({ id, reason: 'service_unavailable' }));
          }
        },
        () => 'service_unavailable',
      ),
    );
    world.faults.setService('bss', { down: false });
    expect(problems).toHaveLength(3);
    const spans = exporter.getFinishedSpans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const tick = byName.get('tick power-on')!;
    const batch = byName.get('action powering_on')!;
    const pcs = byName.get('pcs powerStatus')!;
    const bss = byName.get('bss setBootParameters')!;
    for (const s of [tick, batch, pcs, bss]) expect(s, [...byName.keys()].join(', ')).toBeDefined();
    expect(new Set([tick, batch, pcs, bss].map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(batch.parentSpanContext?.spanId).toBe(tick.spanContext().spanId);
    expect(pcs.parentSpanContext?.spanId).toBe(batch.spanContext().spanId);
    expect(bss.parentSpanContext?.spanId).toBe(batch.spanContext().spanId);
    expect(bss.status.code).toBe(2); // ERROR
    expect(pcs.attributes['bootorch.outcome']).toBe('ok');
    expect(batch.attributes).toMatchObject({ 'bootorch.components': 3, 'bootorch.failed': 3 });
    expect(await sample('bootorch_actions_failed_total', { action: 'powering_on', reason: 'service_unavailable' })).toBe(3);
    expect(await sample('bootorch_operator_ticks_total', { operator: 'power-on', outcome: 'ok' })).toBe(1);
  });

  it('is off without an exporter endpoint', () => {
    expect(startTracing('test', { env: {} })).toBeUndefined();
  });
});
