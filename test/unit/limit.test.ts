import { describe, expect, it } from 'vitest';
import { applyLimit, checkLimitSyntax, isNoLimit, LimitSyntaxError } from '../../src/domain/limit.ts';

const nodes = new Set(['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x1000c0s1b0n1']);
const inv = {
  members: (name: string) =>
    (
      ({
        'compute-a': new Set(['x1000c0s0b0n0', 'x1000c0s0b0n1']),
        Compute: new Set(nodes),
        x9: new Set(['x9999c0s0b0n0']),
      }) as Record<string, Set<string>>
    )[name],
};

describe('limit expressions (BOS §1.3)', () => {
  it.each([
    ['', [...nodes]],
    ['*', [...nodes]],
    ['all', [...nodes]],
    ['x1000c0s0b0n0', ['x1000c0s0b0n0']],
    ['X1000C0S00B0N0', ['x1000c0s0b0n0']],
    ['compute-a', ['x1000c0s0b0n0', 'x1000c0s0b0n1']],
    ['all,!compute-a', ['x1000c0s1b0n0', 'x1000c0s1b0n1']],
    ['!compute-a', []],
    ['compute-a,&x1000c0s0b0n1', ['x1000c0s0b0n1']],
    ['Compute,!x1000c0s1b0n1,&compute-a', ['x1000c0s0b0n0', 'x1000c0s0b0n1']],
    ['x9', []],
    ['unknown-name', []],
    ['x1000c0s1b0n0,x1000c0s1b0n0', ['x1000c0s1b0n0']],
  ])('%s', (limit, expected) => {
    expect([...applyLimit(nodes, limit, inv)].sort()).toEqual([...expected].sort());
  });

  it.each([
    ['a,,b', /token 2 is empty/],
    ['a,', /token 2 is empty/],
    ['&', /operator but no name/],
    ['a,!', /operator but no name/],
    ['&!x', /operator but no name/],
    ['a b', /white space/],
  ])('rejects %j', (limit, msg) => {
    expect(checkLimitSyntax(limit)).toMatch(msg);
    expect(() => applyLimit(nodes, limit, inv)).toThrow(LimitSyntaxError);
  });

  it('knows what means no limit', () => {
    expect(isNoLimit(null)).toBe(true);
    expect(isNoLimit(' * ')).toBe(true);
    expect(isNoLimit('all')).toBe(false);
  });
});
