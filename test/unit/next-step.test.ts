/**
 * Explain's "what happens next, and what to do" (src/api/next-step.ts), table-driven over the waits a
 * node can be in: a failed node gets nothing more and the retry, never a timed step; a paused session's
 * node the resume; a node behind a failing PCS waits for PCS (not a failure, no action); the timed
 * waits say when, on the engine's own waits.
 */
import { describe, expect, test } from 'vitest';
import { nextStep } from '../../src/api/next-step.ts';
import { classifyWait } from '../../src/api/waits.ts';
import { optionsSchema } from '../../src/domain/options.ts';
import type { EngineComponent } from '../../src/db/components/select.ts';
import type { SessionRow } from '../../src/db/schema.ts';

const NOW = new Date('2026-12-03T14:10:00Z');
const options = optionsSchema.parse({
  max_power_on_wait_time: 120,
  max_boot_wait_time: 600,
  max_power_off_wait_time: 300,
  default_retry_policy: 3,
});

function node(o: Partial<EngineComponent>): EngineComponent {
  return {
    id: 'x1000c0s0b0n0',
    enabled: true,
    phase: '',
    status: 'stable',
    statusOverride: '',
    lastAction: '',
    lastActionFailed: false,
    lastActionAt: null,
    desiredKernel: 'k',
    desiredKernelParameters: '',
    desiredInitrd: '',
    desiredConfiguration: '',
    actualKernel: '',
    actualKernelParameters: '',
    actualInitrd: '',
    actualUpdatedAt: null,
    error: '',
    failureReason: '',
    powerUnknownSince: null,
    powerOnAttempts: 0,
    powerOffGracefulAttempts: 0,
    powerOffForcefulAttempts: 0,
    session: 's1',
    sessionTenant: '',
    retryPolicy: null,
    version: '1',
    policy: null,
    rescued: false,
    ...o,
  } as EngineComponent;
}

const session = (o: Partial<SessionRow> = {}) =>
  ({ name: 's1', status: 'running', paused: false, aborted: false, pauseReason: null, ...o }) as SessionRow;

function step(c: EngineComponent, s: SessionRow | null = session(), outage: { service: string; since: Date | null } | null = null) {
  return nextStep({ c, wait: classifyWait(c, options, NOW, s, outage?.since), session: s, options, now: NOW, outage });
}

describe('what happens next', () => {
  test('a failed node: nothing more, the reason in words, the retry; never a timed step', () => {
    const s = step(node({ enabled: false, status: 'failed', failureReason: 'power_on_timeout', error: 'Node still off' }));
    expect(s.next).toMatch(/^Nothing more: bootorch has given up on it \(the node did not power on/);
    expect(s.advice).toMatch(/BMC.*then retry it/);
    expect(s.action).toBe('retry');
    expect(s.nextAt).toBeNull();
  });

  test('a node behind a failing PCS waits for PCS since when: not failed, no button', () => {
    const since = new Date('2026-12-03T14:02:10Z');
    const c = node({
      phase: 'powering_off',
      status: 'power_off_pending',
      failureReason: 'service_unavailable',
      error: 'PCS POST /power-status failed (HTTP 503): x',
    });
    const w = classifyWait(c, options, NOW, session(), since);
    expect(w.kind).toBe('outside_service');
    expect(w.description).toContain('PCS failing since 14:02:10 UTC');
    const s = step(c, session(), { service: 'PCS', since });
    expect(s.next).toContain('Waiting for PCS (failing since 14:02:10 UTC)');
    expect(s.next).toContain('has not failed');
    expect(s.action).toBe('none');
    expect(s.advice).toContain('Check PCS');
  });

  test('a paused session: nothing new starts until it is resumed; the resume', () => {
    const s = step(
      node({ phase: 'powering_on', status: 'power_on_pending' }),
      session({ paused: true, pauseReason: 'failure budget spent' }),
    );
    expect(s.next).toContain('until session s1 is resumed');
    expect(s.advice).toContain('failure budget spent');
    expect(s.action).toBe('resume_session');
  });

  test('powered on, waiting: power-on again when still off after the wait, a reboot when no report; when', () => {
    const at = new Date(NOW.getTime() - 30_000);
    const s = step(
      node({ phase: 'powering_on', status: 'power_on_called', lastAction: 'powering_on', lastActionAt: at, powerOnAttempts: 1 }),
    );
    expect(s.nextAt).toEqual(new Date(at.getTime() + 120_000));
    expect(s.next).toContain('at 14:11:30 UTC (in 90 s), power-on is sent again (attempt 2 of 3)');
    expect(s.next).toContain('it is rebooted');
    expect(s.action).toBe('none');
  });

  test('graceful power-off: forceful when still on after max_power_off_wait_time', () => {
    const at = new Date(NOW.getTime() - 100_000);
    const s = step(
      node({ phase: 'powering_off', status: 'power_off_gracefully_called', lastAction: 'powering_off_gracefully', lastActionAt: at }),
    );
    expect(s.nextAt).toEqual(new Date(at.getTime() + 300_000));
    expect(s.next).toContain('powered off forcefully');
  });

  test('power unknown: failed with the cause at power_unknown_timeout, the BMC to check', () => {
    const since = new Date(NOW.getTime() - 60_000);
    const s = step(node({ status: 'on_hold', failureReason: 'bmc_unreachable', error: 'refused', powerUnknownSince: since }));
    expect(s.nextAt).toEqual(new Date(since.getTime() + options.power_unknown_timeout * 1000));
    expect(s.next).toContain('it fails with the cause (bmc_unreachable)');
    expect(s.advice).toContain('BMC');
  });

  test('power unknown because bootorch could not ask (local_resources): the advice is its own limits, not the BMC', () => {
    const since = new Date(NOW.getTime() - 60_000);
    const s = step(node({ status: 'on_hold', failureReason: 'local_resources', error: 'EMFILE', powerUnknownSince: since }));
    expect(s.next).toContain('it fails with the cause (local_resources)');
    expect(s.advice).toMatch(/Not the BMC: raise the worker's open-file limit/);
  });

  test('done, and disabled but not failed: nothing, or enable it', () => {
    expect(step(node({ enabled: false }), session({ status: 'complete' }))).toMatchObject({
      action: 'none',
      next: expect.stringContaining('desired state'),
    });
    expect(step(node({ enabled: false, phase: 'powering_on', status: 'power_on_pending' }), null)).toMatchObject({ action: 'enable' });
  });

  test('done in its rescue image: it stays there until an unrescue', () => {
    expect(step(node({ enabled: false, rescued: true }), session({ status: 'complete' }))).toEqual({
      action: 'none',
      next: 'Nothing: it runs its rescue image and stays there; an UNRESCUE session boots it back into its desired state (docs/rescue.md).',
      nextAt: null,
      advice: null,
    });
  });
});
