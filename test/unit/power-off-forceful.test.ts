/**
 * The forceful power-off's action (operators/power-off-forceful.ts) against a power port the test
 * scripts: a node found off is left alone, one found on is forced off and said not to have powered
 * off, and one whose BMC is still being asked (pending, as a standalone worker's reads are at 100,000
 * nodes) is neither forced off nor blamed: its job is retried with the read's own words.
 */
import { describe, expect, it } from 'vitest';
import { powerOffForceful, powerOffForcefulLimit } from '../../src/operators/power-off-forceful.ts';
import { optionsSchema } from '../../src/domain/options.ts';
import type { EngineComponent } from '../../src/db/components/select.ts';
import type { EngineContext } from '../../src/engine/operator.ts';
import type { PowerState } from '../../src/adapters/ports.ts';

const node = (id: string) => ({ id, failureReason: '', policy: null, retryPolicy: null }) as unknown as EngineComponent;

function context(power: Record<string, PowerState>) {
  const forced: string[][] = [];
  const ctx = {
    options: optionsSchema.parse({ max_power_off_wait_time: 300 }),
    adapters: {
      power: {
        powerStatus: async (ids: string[]) => new Map(ids.map((id) => [id, power[id]!])),
        transition: async (op: string, ids: string[]) => {
          if (op === 'Force-Off') forced.push(ids);
          return ['t1'];
        },
      },
    },
  } as unknown as EngineContext;
  return { ctx, forced };
}

describe('power-off-forceful acts on what the power says', () => {
  it('off: nothing; on: forced off with power_off_timeout; still being read: not forced, retried with the cause', async () => {
    const { ctx, forced } = context({
      off: { state: 'off', error: '' },
      on: { state: 'on', error: '' },
      asking: { state: 'unknown', cause: 'bmc_timeout', error: 'timeout: asking (BMC a): still asking (slow BMC)', pending: true },
    });
    const out = await powerOffForceful.jobs!.perform(ctx, [node('off'), node('on'), node('asking')]);
    expect(forced).toEqual([['on']]);
    expect(out.get('off')).toBeUndefined();
    expect(out.get('on')).toMatchObject({ kind: 'continue', problem: { reason: 'power_off_timeout' } });
    expect(out.get('asking')).toEqual({
      kind: 'continue',
      retry: true,
      problem: { reason: 'bmc_timeout', error: 'Power not read yet, so not forced off: timeout: asking (BMC a): still asking (slow BMC)' },
    });
  });

  it('a read that failed (not pending) is forced off as before: the BMC call says what is wrong', async () => {
    const { ctx, forced } = context({ dead: { state: 'unknown', cause: 'bmc_unreachable', error: 'ECONNREFUSED' } });
    await powerOffForceful.jobs!.perform(ctx, [node('dead')]);
    expect(forced).toEqual([['dead']]);
  });

  it('a node whose power is still being read is not decided on again (no attempt counted), and the operator looks again in 5 s', async () => {
    const ctx = {
      adapters: { power: { stillReading: (ids: string[]) => new Set(ids.filter((id) => id === 'asking')) } },
    } as unknown as EngineContext;
    const limit = powerOffForcefulLimit;
    expect(await limit(ctx, [node('on'), node('asking')])).toEqual({ rows: [node('on')], wake: [['power-off-forceful', 5]] });
    expect(await limit(ctx, [node('on')])).toEqual({ rows: [node('on')] });
    // CSM's PCS answers every node at once: no such nodes, every row is decided on.
    const csm = { adapters: { power: {} } } as unknown as EngineContext;
    expect(await limit(csm, [node('asking')])).toEqual({ rows: [node('asking')] });
  });
});
