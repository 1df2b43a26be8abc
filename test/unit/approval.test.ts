/** Which sessions wait for a second admin, and who may approve them (domain/approval.ts). */
import { describe, expect, it } from 'vitest';
import { approvalReason, approvalRefusal } from '../../src/domain/approval.ts';

describe('approvalReason', () => {
  it.each([
    // limit, nodes, threshold, waits
    ['', 8, 4, true],
    ['', 4, 4, false],
    ['all', 2, 4, true],
    ['*', 2, 4, true],
    ['x1c0s0b0n0,&all', 1, 4, true],
    ['all,!x1c0s0b0n0', 1, 4, true],
    ['!all', 0, 4, false],
    ['compute', 3, 4, false],
    ['all', 2, 0, false],
    ['', 100_000, 0, false],
    ['all', 0, 4, false],
  ] as const)('limit %j, %i nodes, threshold %i: waits %s', (limit, nodes, threshold, waits) => {
    expect(approvalReason(limit, nodes, { approval_node_threshold: threshold }) !== '').toBe(waits);
  });
});

describe('approvalRefusal', () => {
  const waiting = { approvalNeeded: 'limit "all"', approvedBy: null, createdBy: 'alice', status: 'pending' };
  it.each([
    [waiting, 'bob', null],
    [waiting, 'alice', 'own_session'],
    [{ ...waiting, createdBy: null }, 'alice', null],
    [{ ...waiting, approvedBy: 'bob' }, 'carol', 'already_approved'],
    [{ ...waiting, approvalNeeded: '' }, 'bob', 'not_waiting'],
    [{ ...waiting, status: 'running' }, 'bob', 'not_waiting'],
  ] as const)('%j by %s: %s', (s, actor, refusal) => {
    expect(approvalRefusal(s, actor)).toBe(refusal);
  });
});
