/**
 * deploy-to-disk (Ironic's switch to the installed system). Action `switching_to_disk`, counter
 * power_on_attempts (the power cycle is the node's next power-on).
 * Selects:
 * - enabled components in phase switching_to_disk (their deploy agent wrote the image), not held
 *   (on_hold: status holds a node whose power is unknown),
 * - not in a paused or aborted session,
 * - known to HSM,
 * - whose switch was not made yet, or failed (status marks it: the deploy went back to written).
 * Does, per chunk: moves the deploys from written to booting_disk (so a repeated tick cycles no node
 * twice), then one power-port call that sets each node's next boot to its disk and power-cycles it
 * (IPMI `chassis bootdev disk` + `power cycle`, Redfish `BootSourceOverrideTarget: Hdd` + a reset).
 * A node whose BMC call failed goes back to written and is tried again (transient) or failed.
 */
import { actionOperator } from '../engine/action-operator.ts';
import { again, failed, type Outcome } from '../engine/outcome.ts';
import { moveDeploys } from '../db/deploys.ts';
import type { BootFromDiskProblem } from '../adapters/ports.ts';

export const deployToDisk = actionOperator({
  name: 'deploy-to-disk',
  action: 'switching_to_disk',
  counter: 'power_on_attempts',
  exhaustedReason: 'power_on_timeout',
  // Not while held for unknown power (status row U1): the switch is a BMC call, and its power is unknown.
  selection: () => ({ enabled: true, phases: ['switching_to_disk'], excludeStatuses: ['on_hold'], excludePausedSessions: true }),
  // Once per deploy: not again until status saw the switch fail (or the phase moves on to booting_disk).
  ready: (_ctx, c) => ({
    criterion: 'switch to disk not yet made, or failed',
    met: c.lastAction !== 'switching_to_disk' || c.lastActionFailed,
    detail: `last action ${c.lastAction || 'none'}${c.lastActionFailed ? ' (failed)' : ''}`,
  }),
  async perform(ctx, chunk) {
    const outcomes = new Map<string, Outcome>();
    const moved = await moveDeploys(
      ctx.db,
      chunk.map((c) => c.id),
      { state: 'booting_disk' },
      ['written'],
    );
    const ids = moved.map((d) => d.id);
    if (ids.length === 0) return outcomes;
    const bootFromDisk = ctx.adapters.power.bootFromDisk?.bind(ctx.adapters.power);
    const problems: BootFromDiskProblem[] = bootFromDisk
      ? await bootFromDisk(ids).catch((e: unknown) => ids.map((id) => ({ id, error: String(e), transient: true })))
      : ids.map((id) => ({
          id,
          error: 'this power service cannot set a boot device (CSM PCS has no such call): disk deploys need the standalone adapters',
          transient: false,
        }));
    await moveDeploys(
      ctx.db,
      problems.map((p) => p.id),
      { state: 'written' },
      ['booting_disk'],
    );
    for (const p of problems) {
      const problem = { error: p.error, reason: p.cause ?? ('service_unavailable' as const) };
      outcomes.set(p.id, p.transient ? again(problem) : failed(problem));
    }
    return outcomes;
  },
  next: (ctx) => ({ kick: ['status'], wake: [['status', ctx.options.max_boot_wait_time + 0.5]] }),
});
