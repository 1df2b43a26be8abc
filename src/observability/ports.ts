/**
 * Outside calls measured at the ports, once, over whatever adapters the factory built (HTTP clients,
 * the simulator, or any later backend): every port method call counts by service, operation and
 * outcome, observes its latency, and runs in a client span. So the simulated default shows the same
 * series as a real CSM system.
 *
 * The service label is the port object's own `serviceName` when it declares one (a standalone Redfish
 * power adapter says `redfish`), else the CSM service behind that port.
 */
import type { Adapters } from '../adapters/ports.ts';
import { outsideCalls, outsideCallSeconds } from './metrics.ts';
import { inSpan, SpanKind } from './tracing.ts';
import { ServiceHealth } from './service-health.ts';
import type { Logger } from 'pino';

type PortKey = 'inventory' | 'power' | 'bootParams' | 'config' | 'images';

/** The service behind each port by default (the CSM names used everywhere else: ServiceError, options). */
export const DEFAULT_SERVICES: Record<PortKey, string> = {
  inventory: 'hsm',
  power: 'pcs',
  bootParams: 'bss',
  config: 'cfs',
  images: 'ims',
};

const INSTRUMENTED = Symbol('bootorch.instrumented');

/** Wrap one port: each method call is timed, counted and traced; other properties pass through. */
export function instrumentPort<T extends object>(port: T, service: string, health?: ServiceHealth): T {
  if ((port as Record<symbol, unknown>)[INSTRUMENTED]) return port;
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(port, {
    get(target, prop, receiver) {
      if (prop === INSTRUMENTED) return true;
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string' || prop === 'constructor') return value;
      let w = wrapped.get(prop);
      if (!w) {
        const operation = prop;
        w = function (this: unknown, ...args: unknown[]) {
          return timed(service, operation, () => (value as (...a: unknown[]) => unknown).apply(target, args), health);
        };
        wrapped.set(prop, w);
      }
      return w;
    },
  });
}

async function timed(service: string, operation: string, call: () => unknown, health?: ServiceHealth): Promise<unknown> {
  return inSpan(
    `${service} ${operation}`,
    { 'bootorch.service': service, 'bootorch.operation': operation },
    async (span) => {
      const start = process.hrtime.bigint();
      let outcome = 'ok';
      try {
        const r = await call();
        health?.succeeded(service);
        return r;
      } catch (e) {
        outcome = 'error';
        health?.failed(service, operation, e);
        throw e;
      } finally {
        const labels = { service, operation, outcome };
        outsideCalls.inc(labels);
        outsideCallSeconds.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
        span.setAttribute('bootorch.outcome', outcome);
      }
    },
    SpanKind.CLIENT,
  );
}

/**
 * The same adapters with every port measured, and, with a logger, each service's outages told in two
 * lines (service-health.ts). Extra properties (the simulated world, close()) and configure() are kept
 * as they are.
 */
export function instrumentAdapters<A extends Adapters>(adapters: A, log?: Logger): A {
  const health = log ? new ServiceHealth(log) : undefined;
  const out: A = { ...adapters };
  for (const key of Object.keys(DEFAULT_SERVICES) as PortKey[]) {
    const port = adapters[key] as object & { serviceName?: string };
    (out as Record<PortKey, unknown>)[key] = instrumentPort(port, port.serviceName ?? DEFAULT_SERVICES[key], health);
  }
  return out;
}
