/**
 * A newly started worker's first moments, for the killed-worker fault test: when its /healthz first
 * answers 200 (its engine has started: queues polled, lease reaper running) and when it first acts
 * (its own /metrics count an operator tick it finished or an action batch it recorded), each in ms
 * from its spawn. Both are polled against one deadline; a worker that exits, or is still silent at
 * the deadline, leaves what it did not reach undefined and says why. Never throws.
 */
import { samples } from '../helpers/metrics.ts';
import type { RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';

export interface FirstAction {
  readyMs?: number;
  actedMs?: number;
  /** What it had done when first seen acting: `tick <operator>`, `<action> batch`, or both. */
  act?: string;
  /** Why actedMs is missing. */
  missing?: string;
}

/** Watch `worker` (listening for /healthz and /metrics on `port`, spawned at `spawnedAt`) until it acts. */
export async function firstAction(worker: RoleProcess, port: number, spawnedAt: number, timeoutMs: number): Promise<FirstAction> {
  const seen: FirstAction = {};
  const gone = () => worker.proc.exitCode !== null || worker.proc.signalCode !== null;
  const get = (p: string) =>
    fetch(`http://127.0.0.1:${port}${p}`).then(
      async (r) => (r.status === 200 ? r.text() : undefined),
      () => undefined,
    );
  try {
    await waitFor(
      async () => {
        if (gone()) {
          seen.missing = `exited (${worker.proc.exitCode ?? worker.proc.signalCode}) before acting`;
          return true;
        }
        if (seen.readyMs === undefined) {
          if ((await get('/healthz')) === undefined) return false;
          seen.readyMs = Date.now() - spawnedAt;
        }
        const text = await get('/metrics');
        if (text === undefined) return false;
        const tick = samples(text, 'bootorch_operator_ticks_total').find((s) => s.labels.outcome === 'ok' && s.value > 0);
        const batch = samples(text, 'bootorch_actions_started_total').find((s) => s.value > 0);
        if (!tick && !batch) return false;
        seen.actedMs = Date.now() - spawnedAt;
        seen.act = [tick && `tick ${tick.labels.operator}`, batch && `${batch.labels.action} batch`].filter(Boolean).join(' and ');
        return true;
      },
      'the new worker acting',
      timeoutMs,
      () => '',
      50,
    );
  } catch {
    seen.missing = `no action within ${timeoutMs / 1000} s`;
  }
  return seen;
}

/** `ready 2.1 s, acted 2.6 s (tick status)`, or what was missing. */
export function describeFirstAction(f: FirstAction): string {
  const s = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  return `ready ${s(f.readyMs)}, acted ${f.actedMs === undefined ? (f.missing ?? 'never') : `${s(f.actedMs)} (${f.act})`}`;
}
