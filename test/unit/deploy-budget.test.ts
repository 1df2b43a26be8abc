import { describe, expect, it } from 'vitest';
import { deployBoundSeconds, deployBudgetWords, deploySlots } from '../../src/domain/deploy-budget.ts';
import { BUDGET_WAIT, decideWithDeploy, waitsForBudget, type DeployView } from '../../src/domain/deploy-decision.ts';
import { DEFAULT_OPTIONS } from '../../src/domain/options.ts';

describe('deploySlots', () => {
  it.each([
    [250, 8000, 1000, 8, 'bandwidth'],
    [250, 0, 1000, 250, 'max_concurrent_deploys'],
    [4, 8000, 1000, 4, 'max_concurrent_deploys'],
    [250, 100_000, 100, 250, 'max_concurrent_deploys'],
    [250, 500, 1000, 1, 'bandwidth'],
  ])('max %i, %i Mbit/s in total, %i per deploy: %i at once (%s)', (max, total, node, slots, by) => {
    const o = { max_concurrent_deploys: max, deploy_image_bandwidth: total, deploy_node_bandwidth: node };
    expect(deploySlots(o)).toBe(slots);
    expect(deployBudgetWords(o)).toContain(by === 'bandwidth' ? 'deploy_image_bandwidth' : '(max_concurrent_deploys)');
  });

  it('the defaults: 8 at once, by bandwidth', () => {
    expect(deploySlots(DEFAULT_OPTIONS)).toBe(8);
  });

  it('the bound: every byte through the bandwidth', () => {
    expect(deployBoundSeconds(1e9, 1000, 8000)).toBe(1000);
  });
});

describe('a pending deploy waiting for the budget', () => {
  const now = new Date('2030-01-01T00:10:00Z');
  const view = (admittedAt: Date | null): DeployView => ({
    state: 'pending',
    reason: '',
    message: '',
    heartbeatAt: null,
    stateAt: new Date('2030-01-01T00:00:00Z'),
    admittedAt,
  });
  const off = { state: 'off' as const, error: '' as const };
  it.each([
    [null, 'off', true],
    [new Date('2030-01-01T00:09:00Z'), 'off', false],
    [new Date('2029-12-31T23:00:00Z'), 'off', true],
    [null, 'on', false],
  ])('admitted at %s, power %s: waiting %s', (at, power, waiting) => {
    expect(waitsForBudget(view(at), { state: power as 'on' | 'off', error: '' }, { maxBootWaitTime: 1200 }, now)).toBe(waiting);
  });

  it('explain and the status pass say so', () => {
    const c = {
      id: 'x1c0s0b0n0',
      enabled: true,
      status: 'power_on_pending',
      phase: 'powering_on',
      lastAction: '',
      lastActionAt: null,
      lastActionFailed: false,
      desiredKernel: 'k',
      desiredInitrd: 'i',
      desiredKernelParameters: 'p',
      actualKernel: '',
      actualInitrd: '',
      actualKernelParameters: '',
    };
    const waits = {
      maxBootWaitTime: 1200,
      maxPowerOnWaitTime: 120,
      maxPowerOffWaitTime: 300,
      powerUnknownTimeout: 60,
      deployHeartbeatTimeout: 300,
    };
    const cfs = { id: c.id, enabled: true, desiredConfig: '', configurationStatus: 'configured', errorCount: 0 };
    const d = decideWithDeploy(c as never, view(null), off as never, cfs as never, waits as never, now);
    expect(d.why).toContain(BUDGET_WAIT);
  });
});
