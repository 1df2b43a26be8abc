/** CFS v3 options and session views for the simulator (the batcher's knobs shown in CFS's units). */
import type { CfsSessionRecord } from '../batcher.ts';
import type { SimWorld } from '../world.ts';
import { json, problem, type Reply } from './router.ts';

export function cfsOptionsView(world: SimWorld): Record<string, unknown> {
  const b = world.batcher.o;
  const o = world.cfs.options;
  // CFS counts in whole seconds; the simulator's batcher runs in ms, so small values show as 0 / 1.
  return {
    hardware_sync_interval: 10,
    batcher_check_interval: Math.max(1, Math.round(b.checkIntervalMs / 1000)),
    batch_size: b.batchSize,
    batch_window: Math.round(b.batchWindowMs / 1000),
    default_batcher_retry_policy: o.default_batcher_retry_policy,
    default_playbook: o.default_playbook,
    default_ansible_config: 'cfs-default-ansible-cfg',
    session_ttl: '7d',
    batcher_max_backoff: 3600,
    batcher_disable: b.disabled,
    batcher_pending_timeout: 300,
    logging_level: 'INFO',
    default_page_size: o.default_page_size,
    debug_wait_time: 3600,
    include_ara_links: o.include_ara_links,
  };
}

export function patchCfsOptions(world: SimWorld, body: unknown): Reply {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return problem(400, 'body must be an object');
  const b = body as Record<string, unknown>;
  const int = (k: string, min: number) => {
    if (b[k] === undefined) return undefined;
    if (!Number.isInteger(b[k]) || (b[k] as number) < min) throw new Error(`${k} must be an integer >= ${min}`);
    return b[k] as number;
  };
  try {
    const o = world.cfs.options;
    const retry = int('default_batcher_retry_policy', 0);
    if (retry !== undefined) o.default_batcher_retry_policy = retry;
    const page = int('default_page_size', 1);
    if (page !== undefined) o.default_page_size = page;
    if (typeof b.include_ara_links === 'boolean') o.include_ara_links = b.include_ara_links;
    const size = int('batch_size', 1);
    const window = int('batch_window', 0);
    const check = int('batcher_check_interval', 1);
    world.batcher.set({
      batchSize: size,
      batchWindowMs: window === undefined ? undefined : window * 1000,
      checkIntervalMs: check === undefined ? undefined : check * 1000,
      disabled: typeof b.batcher_disable === 'boolean' ? b.batcher_disable : undefined,
    });
  } catch (e) {
    return problem(400, (e as Error).message);
  }
  return json(200, cfsOptionsView(world));
}

export function sessionView(s: CfsSessionRecord): Record<string, unknown> {
  const session: Record<string, unknown> = { status: s.status, succeeded: s.succeeded, start_time: s.start_time };
  if (s.completion_time) session.completion_time = s.completion_time;
  return {
    name: s.name,
    configuration: { name: s.configuration_name, limit: s.configuration_limit },
    ansible: { limit: s.ansible_limit, config: 'cfs-default-ansible-cfg', verbosity: 0 },
    target: { definition: 'dynamic', groups: [] },
    status: { artifacts: [], session },
    tags: s.tags,
    debug_on_failure: false,
  };
}
