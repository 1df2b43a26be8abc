/**
 * Dry run detail: for a session plan, what would happen to each node, from its power state (PCS),
 * its CFS record and what it last reported booting. Writes nothing.
 */
import type { Db } from '../db/client.ts';
import { readComponents } from '../db/components/read.ts';
import type { Adapters, ConfigComponent, PowerState } from '../adapters/ports.ts';
import type { SessionPlan, DesiredState, SkipReason } from './plan.ts';
import { errorText } from './outcome.ts';
import type { SessionOperation } from '../domain/sessions.ts';
import { quarantineWords } from '../domain/quarantine.ts';

export type PlannedAction = 'power_cycle' | 'power_on' | 'power_off' | 'configure_only' | 'nothing' | 'skip' | 'unknown';

export interface PlannedNode {
  id: string;
  bootSet: string | null;
  action: PlannedAction;
  skipReason: SkipReason | null;
  desired: DesiredState | null;
  /** Why this action (power state, artifacts, configuration seen). */
  detail: string;
}

export async function describePlan(
  db: Db,
  adapters: Adapters,
  plan: SessionPlan,
  operation: SessionOperation,
): Promise<{ nodes: PlannedNode[]; warnings: string[] }> {
  const ids = [...plan.managed.keys()].sort();
  const warnings: string[] = [];
  let power = new Map<string, PowerState>();
  let cfs = new Map<string, ConfigComponent>();
  try {
    power = await adapters.power.powerStatus(ids);
  } catch (e) {
    warnings.push(`PCS: ${errorText(e)}`);
  }
  try {
    cfs = new Map((await adapters.config.getComponents(ids)).map((c) => [c.id, c]));
  } catch (e) {
    warnings.push(`CFS: ${errorText(e)}`);
  }
  const actual = new Map(
    (await readComponents(db, ids)).map((x) => [x.id, { k: x.actualKernel, p: x.actualKernelParameters, i: x.actualInitrd }]),
  );
  const nodes: PlannedNode[] = ids.map((id) => {
    const m = plan.managed.get(id)!;
    const p = power.get(id);
    const base = { id, bootSet: m.bootSet, skipReason: null, desired: m.desired };
    if (!p) return { ...base, action: 'unknown' as const, detail: 'power state unknown (PCS did not answer for it)' };
    if (p.state === 'unknown') return { ...base, action: 'unknown' as const, detail: `power unknown (${p.cause}): ${p.error}` };
    const on = p.state === 'on';
    if (operation === 'shutdown')
      return { ...base, action: on ? ('power_off' as const) : ('nothing' as const), detail: `power ${p.state}` };
    if (!on) return { ...base, action: 'power_on' as const, detail: 'off' };
    if (operation === 'reboot' || operation === 'rescue' || operation === 'unrescue')
      return { ...base, action: 'power_cycle' as const, detail: `on; a ${operation} always power cycles` };
    const a = actual.get(id);
    const match = !!a && a.k === m.desired.kernel && a.p === m.desired.kernelParameters && a.i === m.desired.initrd;
    if (!match)
      return {
        ...base,
        action: 'power_cycle' as const,
        detail: a?.k ? 'on with other boot artifacts' : 'on; has not reported booting the desired artifacts',
      };
    const c = cfs.get(id);
    const configured =
      m.desired.configuration === '' || (c?.desiredConfig === m.desired.configuration && c.configurationStatus === 'configured');
    return configured
      ? { ...base, action: 'nothing' as const, detail: 'already booted and configured as desired' }
      : {
          ...base,
          action: 'configure_only' as const,
          detail: `booted as desired; CFS ${c ? `${c.desiredConfig || '(none)'} ${c.configurationStatus}` : 'has no record'}`,
        };
  });
  for (const [id, reason] of [...plan.skipped.entries()].sort()) {
    const q = plan.quarantined.get(id);
    const detail = q ? quarantineWords(id, q) : reason.replace(/_/g, ' ');
    nodes.push({ id, bootSet: null, action: 'skip', skipReason: reason, desired: null, detail });
  }
  return { nodes, warnings };
}
