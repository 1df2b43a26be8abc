/** Session extended status arithmetic (reference §2.2): percentages, groups, timing. */
import { describe, expect, test } from 'vitest';
import { buildExtendedStatus, componentGroup, percent } from '../../src/domain/session-status.ts';

describe('percent', () => {
  test.each([
    [1, 3, 33.33],
    [2, 3, 66.67],
    [0, 0, 0],
    [5, 0, 0],
    [1, 8, 12.5],
    [10, 10, 100],
    [1, 10000, 0.01],
    [1, 30000, 0],
  ])('%i of %i -> %f', (part, total, expected) => {
    expect(percent(part, total)).toBe(expected);
  });
});

describe('componentGroup', () => {
  test('up to 10 ids, sorted, with ... when the group is larger', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `x1c0s${i}b0n0`);
    const g = componentGroup('boom', 12, ids.slice(0, 10));
    expect(g.ids).toHaveLength(10);
    expect(g.list.endsWith('...')).toBe(true);
    expect(g.list.split(',')).toHaveLength(10);
    expect(componentGroup('e', 2, ['b', 'a'])).toEqual({ key: 'e', count: 2, ids: ['a', 'b'], list: 'a,b' });
    expect(componentGroup('e', 10, ids.slice(0, 10)).list.endsWith('...')).toBe(false);
  });
});

describe('buildExtendedStatus', () => {
  const start = new Date('2026-01-01T00:00:00Z');
  const facts = { name: 's', status: 'running' as const, startTime: start, endTime: null, paused: true, pauseReason: 'budget' };
  test('N = owned + staged; phases; live duration runs to now', () => {
    const s = buildExtendedStatus(
      facts,
      { owned: 5, staged: 1, successful: 2, failed: 1, poweringOn: 1, poweringOff: 1, configuring: 0, deploying: 1 },
      [],
      [],
      new Date('2026-01-02T02:03:04Z'),
    );
    expect(s).toMatchObject({
      managedComponentsCount: 6,
      percentSuccessful: 33.33,
      percentFailed: 16.67,
      percentStaged: 16.67,
      phases: { percentComplete: 50, percentPoweringOn: 16.67, percentPoweringOff: 16.67, percentConfiguring: 0, percentDeploying: 16.67 },
      timing: { startTime: start.toISOString(), endTime: null, duration: '1 day, 2:03:04' },
      paused: true,
      pauseReason: 'budget',
    });
  });
  test('N = 0 gives zeros; a complete session counts to its end', () => {
    const s = buildExtendedStatus(
      { ...facts, status: 'complete', endTime: new Date(start.getTime() + 20_000) },
      { owned: 0, staged: 0, successful: 0, failed: 0, poweringOn: 0, poweringOff: 0, configuring: 0, deploying: 0 },
      [],
      [],
      new Date('2030-01-01Z'),
    );
    expect(s.percentSuccessful).toBe(0);
    expect(s.phases.percentComplete).toBe(0);
    expect(s.timing.duration).toBe('0:00:20');
  });
});
