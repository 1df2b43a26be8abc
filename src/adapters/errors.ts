/**
 * The one error type adapters throw. It names the service, the endpoint, the HTTP status (if any)
 * and the problem detail, because that text becomes a component's error for an operator to read.
 */
export type ServiceName = 'hsm' | 'pcs' | 'bss' | 'cfs' | 'ims' | 'bmc';

export class ServiceError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly endpoint: string,
    readonly detail: string,
    readonly status?: number,
    /** true when retrying later may succeed (5xx, timeout, connection refused). */
    readonly transient = true,
  ) {
    super(`${service.toUpperCase()} ${endpoint} failed${status ? ` (HTTP ${status})` : ''}: ${detail}`);
    this.name = 'ServiceError';
  }
}
