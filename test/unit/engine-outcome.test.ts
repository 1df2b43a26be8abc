/** What a thrown error becomes: transient errors continue (retried next tick), permanent ones fail. */
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/adapters/errors.ts';
import { fromError } from '../../src/engine/outcome.ts';

describe('fromError', () => {
  it.each([
    ['a 503 from PCS', new ServiceError('pcs', 'POST /transitions', 'Service Unavailable', 503), 'continue', 'service_unavailable'],
    [
      'a timeout',
      new ServiceError('hsm', 'GET /hsm/v2/State/Components', 'timeout: no response within 10 s'),
      'continue',
      'service_unavailable',
    ],
    ['a 400 from PCS', new ServiceError('pcs', 'POST /transitions', 'bad xname', 400, false), 'failed', 'service_unavailable'],
    [
      'BSS refusing the parameters',
      new ServiceError('bss', 'PUT /boot/v1/bootparameters', 'bad kernel', 400, false),
      'failed',
      'boot_parameters_failed',
    ],
    [
      'a lost database',
      Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' }),
      'continue',
      'service_unavailable',
    ],
    ['a bug', new TypeError('x is undefined'), 'failed', 'service_unavailable'],
  ] as const)('%s', (_name, e, kind, reason) => {
    const o = fromError(e);
    expect(o.kind).toBe(kind);
    // A database error is told in words, never as the driver's text (SQL, for a failed query).
    const error = (e as { code?: string }).code === '57P01' ? 'database unavailable (shutting down); retrying' : e.message;
    expect(o.kind !== 'done' && o.problem).toMatchObject({ error, reason });
  });

  it('an operator may name the reason its problems get (a BSS refusal keeps its own)', () => {
    expect(fromError(new ServiceError('pcs', 'POST /transitions', 'down', 503), 'power_on_timeout')).toMatchObject({
      kind: 'continue',
      problem: { reason: 'power_on_timeout' },
    });
  });
});
