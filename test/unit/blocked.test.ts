/**
 * What holds a node that is not failed (domain/blocked.ts): its BMC when its power cannot be read,
 * bootorch itself when it could not ask (local_resources), or the outside service its error names.
 */
import { describe, expect, it } from 'vitest';
import { blockingService } from '../../src/domain/blocked.ts';

const node = (o: { status?: string; failureReason: string; error?: string; enabled?: boolean }) => ({
  enabled: o.enabled ?? true,
  status: o.status ?? 'on_hold',
  failureReason: o.failureReason,
  error: o.error ?? '',
});

describe('blockingService', () => {
  it.each([
    ['a BMC that does not answer', node({ failureReason: 'bmc_unreachable' }), 'BMC'],
    ['bootorch out of open files', node({ failureReason: 'local_resources' }), 'bootorch'],
    [
      'PCS failing',
      node({ status: 'power_on_pending', failureReason: 'service_unavailable', error: 'PCS POST /x failed (HTTP 503)' }),
      'PCS',
    ],
    ['a failed node', node({ status: 'failed', failureReason: 'local_resources' }), null],
    ['a disabled node', node({ failureReason: 'bmc_unreachable', enabled: false }), null],
    ['a reason of its own', node({ status: 'power_on_called', failureReason: 'power_on_timeout' }), null],
  ] as const)('%s', (_what, c, service) => {
    expect(blockingService(c)).toBe(service);
  });
});
