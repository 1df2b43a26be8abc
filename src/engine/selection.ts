/**
 * Operator selections as data. The SQL in db/components/select.ts selects with them; explain
 * evaluates the very same objects against one component, so the two cannot tell different stories.
 */
import type { ComponentSelection, EngineComponent } from '../db/components/select.ts';
import type { Options } from '../domain/options.ts';

export interface Criterion {
  criterion: string;
  met: boolean;
  detail: string;
}

export interface Waits {
  maxPowerOffWaitTime: number;
  maxPowerOnWaitTime: number;
  maxBootWaitTime: number;
  powerUnknownTimeout: number;
}

/** Options, overridden by the owning session's rollout policy (escalation as data). */
export function effectiveWaits(c: Pick<EngineComponent, 'policy'>, o: Options): Waits {
  const p = (c.policy ?? {}) as Record<string, unknown>;
  const num = (k: string, d: number) => (typeof p[k] === 'number' ? (p[k] as number) : d);
  return {
    maxPowerOffWaitTime: num('maxPowerOffWaitTime', o.max_power_off_wait_time),
    maxPowerOnWaitTime: num('maxPowerOnWaitTime', o.max_power_on_wait_time),
    maxBootWaitTime: num('maxBootWaitTime', o.max_boot_wait_time),
    powerUnknownTimeout: num('powerUnknownTimeout', o.power_unknown_timeout),
  };
}

export interface SelectionFacts {
  /** Whether the owning session is paused or aborted. */
  sessionHeld: boolean;
  /** The owning session's state (pending, running, complete), null when it has none; for the words only. */
  sessionState?: string | null;
  now: Date;
}

/** Evaluate a selection against one component, criterion by criterion, with the values seen. */
export function evaluateSelection(c: EngineComponent, s: ComponentSelection, f: SelectionFacts): Criterion[] {
  const out: Criterion[] = [];
  if (s.enabled !== undefined) {
    out.push({ criterion: s.enabled ? 'enabled' : 'disabled', met: c.enabled === s.enabled, detail: `enabled is ${c.enabled}` });
  }
  if (s.statuses) {
    out.push({ criterion: `status in ${s.statuses.join('|')}`, met: s.statuses.includes(c.status), detail: `status is ${c.status}` });
  }
  if (s.phases) {
    out.push({ criterion: `phase in ${s.phases.join('|')}`, met: s.phases.includes(c.phase), detail: `phase is ${c.phase || "''"}` });
  }
  if (s.excludeStatuses) {
    out.push({
      criterion: `status not ${s.excludeStatuses.join('|')}`,
      met: !s.excludeStatuses.includes(c.status),
      detail: `status is ${c.status}`,
    });
  }
  if (s.ids) out.push({ criterion: 'among the selected ids', met: s.ids.includes(c.id), detail: '' });
  if (s.excludePausedSessions) {
    out.push({
      criterion: 'session not paused or aborted',
      met: !f.sessionHeld,
      detail: f.sessionHeld
        ? `session ${c.session} is paused or aborted`
        : !c.session || !f.sessionState
          ? 'no session owns it'
          : f.sessionState === 'complete'
            ? `session ${c.session} has ended`
            : `session ${c.session} is ${f.sessionState}`,
    });
  }
  if (s.actualOlderThan) {
    const set = c.actualKernel !== '' || c.actualInitrd !== '' || c.actualKernelParameters !== '';
    const old = !c.actualUpdatedAt || c.actualUpdatedAt < s.actualOlderThan;
    out.push({
      criterion: 'actual state set and older than component_actual_state_ttl',
      met: set && old,
      detail: set ? `actual state last updated ${c.actualUpdatedAt?.toISOString() ?? 'never'}` : 'no actual state',
    });
  }
  return out;
}
