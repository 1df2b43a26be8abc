/**
 * A newly started worker's first moments, for the killed-worker fault test: when its /healthz first
 * answers 200 (its engine has started: queues polled, lease reaper running) and when it first acts
 * (its own /metrics count an action batch it recorded and attempted: bootorch_actions_started_total,
 * by action), each in ms from its spawn. Its operator ticks do not count: the engine ticks every
 * operator at start, with or without anything to act on. Both are polled against one deadline; a
 * worker that exits, or has not acted by the deadline, leaves what it did not reach undefined and
 * says why. Never throws: the caller asserts.
 */
import { samples } from '../helpers/metrics.ts';
import type { RoleProcess } from '../helpers/processes.ts';
import { waitFor } from '../helpers/wait.ts';

export interface FirstAction {
  readyMs?: number;
  actedMs?: number;
  /** What it had done when first seen acting: `<action> batch` (several, when seen in one scrape). */
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
        const batches = samples(text, 'bootorch_actions_started_total').filter((s) => s.value > 0);
        if (!batches.length) return false;
        seen.actedMs = Date.now() - spawnedAt;
        seen.act = batches.map((s) => `${s.labels.action} batch`).join(' and ');
        return true;
      },
      'the new worker acting',
      timeoutMs,
      () => '',
      50,
    );
  } catch {
    seen.missing = `no action batch within ${timeoutMs / 1000} s`;
  }
  return seen;
}

/** A worker watched from its spawn: `first` once firstAction has answered, `during` what `running()` said then. */
export interface Watched {
  watched: Promise<FirstAction>;
  first?: FirstAction;
  during?: string;
}

/** firstAction in the background, its answer kept on the returned object. */
export function watch(worker: RoleProcess, port: number, spawnedAt: number, timeoutMs: number, running: () => string): Watched {
  const w: Watched = { watched: firstAction(worker, port, spawnedAt, timeoutMs) };
  void w.watched.then((f) => {
    w.first = f;
    w.during = running();
  });
  return w;
}

/** `ready 2.1 s, acted 5.6 s (powering_on batch)`, or what was missing. */
export function describeFirstAction(f: FirstAction | undefined): string {
  if (!f) return 'still watched';
  const s = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  return `ready ${s(f.readyMs)}, acted ${f.actedMs === undefined ? (f.missing ?? 'never') : `${s(f.actedMs)} (${f.act})`}`;
}
