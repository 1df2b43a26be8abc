/**
 * power-on (BOS operators/power_on.py). Action `powering_on`, counter power_on_attempts.
 * Selects:
 * - enabled components whose status is power_on_pending,
 * - not in a paused or aborted session,
 * - known to HSM,
 * - within the session's power-on wave (operators/waves.ts),
 * - with a disk deploy: within the deploy budget (operators/deploy-budget.ts).
 * Does, per chunk, after recording the action: BSS boot parameters per distinct (kernel, params,
 * initrd) with the referral token recorded; CFS desired configuration set disabled with state cleared
 * (the node's cfs-state-reporter re-enables it after boot); one PCS `On` for the chunk.
 * Unlike BOS, nodes whose boot parameters could not be set are not powered on (they would boot the
 * wrong thing): a transient BSS error is retried, a refusal fails them (boot_parameters_failed).
 */
import { actionOperator } from '../engine/action-operator.ts';
import { groupBy } from '../domain/lists.ts';
import { again, errorText, fromError, type Outcome } from '../engine/outcome.ts';
import { transaction } from '../db/tx.ts';
import { recordBootArtifacts } from '../db/boot-artifacts.ts';
import { setDesiredBssToken } from '../db/components/actions.ts';
import type { EngineComponent } from '../db/components/select.ts';
import { powerOnWaves } from './waves.ts';
import { deployBudget } from './deploy-budget.ts';
import { afterPowerOn, alreadyIn } from './escalation.ts';

export const powerOn = actionOperator({
  name: 'power-on',
  action: 'powering_on',
  counter: 'power_on_attempts',
  exhaustedReason: 'power_on_timeout',
  selection: () => ({ enabled: true, statuses: ['power_on_pending'], excludePausedSessions: true }),
  // The session's waves first, then the deploy budget over every session (nodes with a disk deploy).
  limit: async (ctx, rows) => {
    const waves = await powerOnWaves(ctx, rows);
    const budget = await deployBudget(ctx, waves.rows);
    return { rows: budget.rows, wake: [...waves.wake, ...budget.wake] };
  },
  async perform(ctx, chunk) {
    const outcomes = new Map<string, Outcome>();
    const bootable: EngineComponent[] = [];
    for (const group of groupBy(chunk, (c) => JSON.stringify([c.desiredKernel, c.desiredKernelParameters, c.desiredInitrd]))) {
      const first = group[0]!;
      if (!first.desiredKernel && !first.desiredKernelParameters && !first.desiredInitrd) continue;
      try {
        const { token } = await ctx.adapters.bootParams.setBootParameters({
          hosts: group.map((c) => c.id),
          kernel: first.desiredKernel,
          initrd: first.desiredInitrd,
          params: first.desiredKernelParameters,
        });
        await transaction(ctx.db, async (tx) => {
          await recordBootArtifacts(tx, token, {
            kernel: first.desiredKernel,
            kernelParameters: first.desiredKernelParameters,
            initrd: first.desiredInitrd,
          });
          await setDesiredBssToken(
            tx,
            group.map((c) => c.id),
            token,
          );
        });
        bootable.push(...group);
      } catch (e) {
        const o = fromError(e);
        for (const c of group) outcomes.set(c.id, o);
      }
    }
    for (const group of groupBy(bootable, (c) => JSON.stringify([c.desiredConfiguration, c.session]))) {
      const first = group[0]!;
      try {
        await ctx.adapters.config.patchComponents(
          group.map((c) => c.id),
          {
            enabled: false,
            desiredConfig: first.desiredConfiguration,
            tags: { bos_session: first.session },
            clearState: true,
          },
        );
      } catch (e) {
        // Not fatal: the configuration operator sets CFS again once the node is up.
        for (const c of group) outcomes.set(c.id, again({ error: errorText(e), reason: 'service_unavailable' }));
      }
    }
    if (bootable.length > 0)
      await ctx.adapters.power.transition(
        'On',
        bootable.map((c) => c.id),
        1,
      );
    return outcomes;
  },
  next: afterPowerOn,
  alreadyDone: (ctx, rows) => alreadyIn(ctx, rows, 'on'),
});
