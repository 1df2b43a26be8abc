/** The quarantine's counting rule, its threshold, and which nodes a limit names (domain/quarantine.ts, domain/limit.ts). */
import { describe, expect, it } from 'vitest';
import { countSessionEnd, QUARANTINE_FAILURES_KEPT, quarantineOf, type FailureRun } from '../../src/domain/quarantine.ts';
import { namedNodes } from '../../src/domain/limit.ts';

const AT = new Date('2026-12-03T10:00:00Z');
const none: FailureRun = { failedSessions: 0, failures: [] };
const end = (o: { failed?: boolean; succeeded?: boolean; reason?: string; error?: string }) => ({
  failed: false,
  succeeded: false,
  reason: '',
  error: '',
  ...o,
});
const failure = (session: string) => ({ session, at: AT.toISOString(), reason: 'power_on_timeout', error: 'still off' });

describe('countSessionEnd', () => {
  it.each([
    // what the node was left as, run before, sessions failed in a row after
    ['a failure of its own', end({ failed: true, reason: 'power_on_timeout' }), 0, 1],
    ['another one', end({ failed: true, reason: 'configuration_failed' }), 2, 3],
    ['a success', end({ succeeded: true }), 2, 0],
    ['an abort', end({ failed: true, reason: 'aborted' }), 2, 2],
    ['an outside service down', end({ failed: true, reason: 'service_unavailable' }), 2, 2],
    ['bootorch itself out of open files', end({ failed: true, reason: 'local_resources' }), 2, 2],
    ['disabled without a result', end({}), 2, 2],
  ] as const)('%s', (_what, e, before, after) => {
    const run: FailureRun = { failedSessions: before, failures: Array.from({ length: before }, (_, i) => failure(`s${i}`)) };
    expect(countSessionEnd(run, e, 'now', AT).failedSessions).toBe(after);
  });

  it('keeps the failure with its session, time, reason and error; a success forgets them', () => {
    const one = countSessionEnd(none, end({ failed: true, reason: 'power_on_timeout', error: 'still off' }), 's1', AT);
    expect(one).toEqual({ failedSessions: 1, failures: [failure('s1')] });
    expect(countSessionEnd(one, end({ succeeded: true }), 's2', AT)).toEqual(none);
  });

  it('returns the same run when nothing changes (nothing to write)', () => {
    expect(countSessionEnd(none, end({ succeeded: true }), 's', AT)).toBe(none);
    expect(countSessionEnd(none, end({ failed: true, reason: 'aborted' }), 's', AT)).toBe(none);
  });

  it(`keeps the first ${QUARANTINE_FAILURES_KEPT} failures of a run and counts on`, () => {
    let run = none;
    for (let i = 0; i < QUARANTINE_FAILURES_KEPT + 5; i++) run = countSessionEnd(run, end({ failed: true, reason: 'x' }), `s${i}`, AT);
    expect(run.failedSessions).toBe(QUARANTINE_FAILURES_KEPT + 5);
    expect(run.failures).toHaveLength(QUARANTINE_FAILURES_KEPT);
    expect(run.failures[0]!.session).toBe('s0');
  });
});

describe('quarantineOf', () => {
  const run = (n: number): FailureRun => ({
    failedSessions: n,
    failures: Array.from({ length: n }, (_, i) => ({ ...failure(`s${i}`), at: `2026-12-0${i + 1}T00:00:00.000Z` })),
  });
  it.each([
    [0, 3, false],
    [2, 3, false],
    [3, 3, true],
    [5, 3, true],
    [5, 0, false],
  ] as const)('%i sessions failed, threshold %i: quarantined %s', (n, k, q) => {
    expect(quarantineOf(run(n), k) !== null).toBe(q);
  });

  it('dates it from the failure that reached the threshold, and names the failures that did', () => {
    const q = quarantineOf(run(5), 3)!;
    expect(q).toMatchObject({ since: '2026-12-03T00:00:00.000Z', failedSessions: 5, threshold: 3 });
    expect(q.failures.map((f) => f.session)).toEqual(['s0', 's1', 's2']);
  });
});

describe('namedNodes', () => {
  const inv = { members: (name: string) => (name === 'compute' ? new Set(['x1c0s0b0n0']) : undefined) };
  it.each([
    ['', []],
    ['all', []],
    ['*', []],
    ['compute', []],
    ['x1c0s0b0n0', ['x1c0s0b0n0']],
    ['compute,&x1c0s0b0n1', ['x1c0s0b0n1']],
    ['all,!x1c0s0b0n0', []],
    ['X1C0S0B0N0,x1c0s0b0n1', ['x1c0s0b0n0', 'x1c0s0b0n1']],
  ] as const)('limit %j names %j', (limit, named) => {
    expect([...namedNodes(limit, inv)].sort()).toEqual(named);
  });
});
