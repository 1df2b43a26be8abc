/**
 * power-on (BOS operators/power_on.py). Action `powering_on`, counter power_on_attempts.
 * Selects:
 * - enabled components whose status is power_on_pending,
 * - not in a paused or aborted session,
 * - known to HSM.
 * Does, per chunk, after recording the action: BSS boot parameters per distinct (kernel, params,
 * initrd) with the referral token recorded; CFS desired configuration set disabled with state cleared
 * (the node's cfs-state-reporter re-enables it after boot); one PCS `On` for the chunk.
 * Unlike BOS, nodes whose boot parameters could not be set are not powered on (they would boot the
 * wrong thing); they get the error and are retried.
 */
import { actionOperator, errorText, classify } from '../engine/operator.ts';
import { recordBootArtifacts, setDesiredBssToken, type ComponentProblem, type EngineComponent } from '../db/engine/components.ts';
import { powerOnWaves } from './waves.ts';
import { effectiveWaits } from '../engine/selection.ts';
import { transaction } from '../db/tx.ts';

export const powerOn = actionOperator({
  name: 'power-on',
  action: 'powering_on',
  counter: 'power_on_attempts',
  exhaustedReason: 'power_on_timeout',
  selection: () => ({ enabled: true, statuses: ['power_on_pending'], excludePausedSessions: true }),
  limit: (ctx, rows) => powerOnWaves(ctx, rows),
  async act(ctx, chunk) {
    const problems: ComponentProblem[] = [];
    const bootable: EngineComponent[] = [];
    for (const group of groupBy(chunk, (c) => JSON.stringify([c.desiredKernel, c.desiredKernelParameters, c.desiredInitrd]))) {
      const first = group[0]!;
      if (!first.desiredKernel && !first.desiredKernelParameters && !first.desiredInitrd) continue;
      try {
        const { token } = await ctx.adapters.bootParams.setBootParameters({
          hosts: group.map((c) => c.id), kernel: first.desiredKernel, initrd: first.desiredInitrd, params: first.desiredKernelParameters,
        });
        await transaction(ctx.pool, async (tx) => {
          await recordBootArtifacts(tx.client, token, {
            kernel: first.desiredKernel, kernelParameters: first.desiredKernelParameters, initrd: first.desiredInitrd,
          });
          await setDesiredBssToken(tx.client, group.map((c) => c.id), token);
        });
        bootable.push(...group);
      } catch (e) {
        for (const c of group) problems.push({ id: c.id, error: errorText(e), reason: classify(e) });
      }
    }
    for (const group of groupBy(bootable, (c) => JSON.stringify([c.desiredConfiguration, c.session]))) {
      const first = group[0]!;
      try {
        await ctx.adapters.config.patchComponents(group.map((c) => c.id), {
          enabled: false, desiredConfig: first.desiredConfiguration, tags: { bos_session: first.session }, clearState: true,
        });
      } catch (e) {
        // Not fatal: the configuration operator sets CFS again once the node is up.
        for (const c of group) problems.push({ id: c.id, error: errorText(e), reason: 'service_unavailable' });
      }
    }
    if (bootable.length > 0) await ctx.adapters.power.transition('On', bootable.map((c) => c.id), 1);
    return problems;
  },
  async after(ctx, acted) {
    // Timeouts as delayed kicks: still off after the wait, or on but never reported.
    const waits = new Set(acted.flatMap((c) => {
      const w = effectiveWaits(c, ctx.options);
      return [w.maxPowerOnWaitTime, w.maxBootWaitTime];
    }));
    for (const w of waits) await ctx.wake('status', w + 0.5);
    await ctx.kicker.kickNow(['status']);
  },
});

export function groupBy<T>(items: T[], key: (t: T) => string): T[][] {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const g = m.get(k);
    if (g) g.push(i); else m.set(k, [i]);
  }
  return [...m.values()];
}
