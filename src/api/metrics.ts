/**
 * API metrics in prom-client's default registry (served at /metrics). Labels are bounded by the
 * schema: the operation type and the first root field, never client-chosen operation names.
 */
import { Counter, Histogram } from 'prom-client';
import type { ApolloServerPlugin } from '@apollo/server';
import { Kind } from 'graphql';
import { metric } from '../observability/metrics.ts';
import { nameRequestSpan } from '../observability/tracing.ts';

const operations = metric(
  'bootorch_api_operations_total',
  () =>
    new Counter({
      name: 'bootorch_api_operations_total',
      help: 'GraphQL operations answered, by type, root field and outcome (ok / error)',
      labelNames: ['type', 'field', 'outcome'] as const,
    }),
);

const seconds = metric(
  'bootorch_api_operation_seconds',
  () =>
    new Histogram({
      name: 'bootorch_api_operation_seconds',
      help: 'GraphQL operation duration in seconds, by type',
      labelNames: ['type'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
);

const refused = metric(
  'bootorch_api_refused_total',
  () =>
    new Counter({
      name: 'bootorch_api_refused_total',
      help: 'Requests refused at the edge before any GraphQL work, and live connections closed, by reason',
      labelNames: ['reason'] as const,
    }),
);

/** Count one refusal: rate_limited, a query limit (tokens, nesting, fragments, cost, depth, aliases, directives), ... */
export function countRefusal(reason: string): void {
  refused.inc({ reason });
}

/** Count one answered operation, timed from `startNs` (process.hrtime.bigint()). */
export function countOperation(type: string, field: string, outcome: 'ok' | 'error', startNs: bigint): void {
  operations.inc({ type, field, outcome });
  seconds.observe({ type }, Number(process.hrtime.bigint() - startNs) / 1e9);
}

export function metricsPlugin<T extends object>(): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      const start = process.hrtime.bigint();
      return {
        async didResolveOperation(rc) {
          const op = rc.operation;
          if (!op) return;
          const first = op.selectionSet.selections[0];
          const field = first?.kind === Kind.FIELD ? first.name.value : '';
          nameRequestSpan(`graphql ${op.operation} ${field}`, {
            'graphql.operation.type': op.operation,
            'graphql.operation.name': rc.operationName ?? '',
            'bootorch.field': field,
          });
        },
        async willSendResponse(rc) {
          const type = rc.operation?.operation ?? 'invalid';
          const first = rc.operation?.selectionSet.selections[0];
          const field = first?.kind === Kind.FIELD ? first.name.value : '';
          const outcome =
            rc.errors?.length || (rc.response.body.kind === 'single' && rc.response.body.singleResult.errors?.length) ? 'error' : 'ok';
          countOperation(type, field, outcome, start);
        },
      };
    },
  };
}

export { metricsRegistry } from '../observability/metrics.ts';
