/**
 * CFS v3 components and configurations as CFS stores and computes them (csm-services §1.1-1.3):
 * the exact `configuration_status` algorithm, PATCH semantics (tag merge, state_append, error_count
 * auto-reset), filters and `next` paging. Pure data; the world adds timers, faults and events.
 */
import type { ConfigurationStatus } from '../domain/readings.ts';
import type { CfsComponent, CfsConfiguration, CfsLayer, CfsStateLayer, LayerStatus } from './types.ts';

export interface CfsOptions {
  default_batcher_retry_policy: number;
  default_page_size: number;
  default_playbook: string;
  include_ara_links: boolean;
}

export const DEFAULT_CFS_OPTIONS: CfsOptions = {
  default_batcher_retry_policy: 3,
  default_page_size: 1000,
  default_playbook: 'site.yml',
  include_ara_links: true,
};

const RANK: Record<ConfigurationStatus, number> = { unconfigured: 0, failed: 1, pending: 2, configured: 3 };

/** CFS timestamps: `%Y-%m-%dT%H:%M:%SZ`. */
export function cfsTime(d = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function maxRetries(c: CfsComponent, o: CfsOptions): boolean {
  const policy = c.retry_policy ?? o.default_batcher_retry_policy;
  return policy !== -1 && c.error_count >= policy;
}

/** Status of each desired layer (`controllers/components.py _get_layer_status`). */
export function layerStatuses(c: CfsComponent, config: CfsConfiguration, o: CfsOptions): ConfigurationStatus[] {
  const exhausted = maxRetries(c, o);
  return config.layers.map((layer) => {
    const playbook = layer.playbook || o.default_playbook;
    if (!(layer.commit && layer.clone_url && playbook)) return 'unconfigured';
    const s = c.state.find((x) => x.clone_url === layer.clone_url && x.playbook === playbook && x.commit === layer.commit);
    if (!s) return 'pending';
    if (s.status === 'failed') return exhausted ? 'failed' : 'pending';
    if (s.status === 'incomplete') return 'pending';
    return 'configured';
  });
}

/** `controllers/components.py _get_status`, exactly (csm-services §1.2). */
export function configurationStatus(
  c: CfsComponent,
  configs: ReadonlyMap<string, CfsConfiguration>,
  o: CfsOptions = DEFAULT_CFS_OPTIONS,
): ConfigurationStatus {
  const desired = c.desired_config ? configs.get(c.desired_config) : undefined;
  if (!desired) return c.state.length > 0 ? 'configured' : 'unconfigured';
  let status: ConfigurationStatus = 'configured';
  for (const s of layerStatuses(c, desired, o)) if (RANK[s] < RANK[status]) status = s;
  if (status === 'pending' && maxRetries(c, o)) status = 'failed';
  return status;
}

/** A body for PUT/PATCH of one component (snake_case, as on the wire). */
export interface ComponentPatch {
  desired_config?: string;
  state?: Partial<CfsStateLayer>[];
  state_append?: Partial<CfsStateLayer>;
  error_count?: number;
  retry_policy?: number;
  enabled?: boolean;
  tags?: Record<string, string>;
}

const SUFFIX = /_(failed|incomplete|skipped|applied)$/;

function toStateLayer(l: Partial<CfsStateLayer>, now: string, prev?: CfsStateLayer[]): CfsStateLayer {
  let commit = l.commit ?? '';
  let status: LayerStatus = l.status ?? 'applied';
  const m = SUFFIX.exec(commit);
  if (m) {
    status = m[1] as LayerStatus;
    commit = commit.slice(0, -m[0].length);
  }
  const layer: CfsStateLayer = {
    clone_url: l.clone_url ?? '',
    playbook: l.playbook ?? '',
    commit,
    status,
    last_updated: l.last_updated ?? now,
    session_name: l.session_name ?? '',
  };
  // CASMCMS-9632: re-sent unchanged layers keep their time.
  const same = prev?.find(
    (p) =>
      p.clone_url === layer.clone_url &&
      p.playbook === layer.playbook &&
      p.commit === layer.commit &&
      p.status === layer.status &&
      p.session_name === layer.session_name,
  );
  if (same && !l.last_updated) layer.last_updated = same.last_updated;
  return layer;
}

/** Apply a PUT-or-PATCH body onto a stored record, with CFS's auto fields. Returns the new record. */
export function patchComponent(c: CfsComponent, p: ComponentPatch, now = cfsTime()): CfsComponent {
  const next: CfsComponent = { ...c, tags: { ...c.tags }, state: c.state.slice() };
  if (p.desired_config !== undefined) next.desired_config = p.desired_config;
  if (p.enabled !== undefined) next.enabled = p.enabled;
  if (p.retry_policy !== undefined) next.retry_policy = p.retry_policy;
  if (p.tags) {
    for (const [k, v] of Object.entries(p.tags)) {
      // _tag_cleanup_handler: an empty value deletes the key.
      if (v === '' || v === null) delete next.tags[k];
      else next.tags[k] = v;
    }
  }
  if (p.state) next.state = p.state.map((l) => toStateLayer(l, now, c.state));
  if (p.state_append) {
    const layer = toStateLayer(p.state_append, now);
    // _state_append_handler: replaces any layer with the same (clone_url, playbook), appended last.
    next.state = next.state.filter((l) => !(l.clone_url === layer.clone_url && l.playbook === layer.playbook));
    next.state.push(layer);
  }
  if (p.error_count !== undefined) next.error_count = p.error_count;
  else if (p.desired_config !== undefined || (p.state && p.state.length === 0)) next.error_count = 0;
  return next;
}

export function newComponent(id: string, p: ComponentPatch = {}, now = cfsTime()): CfsComponent {
  // The hwsync agent's DEFAULT_BODY; GET needs state and error_count to exist.
  return patchComponent({ id, desired_config: '', state: [], error_count: 0, enabled: true, tags: {} }, p, now);
}

/** Filters of GET /v3/components and of the dict form of PATCH /v3/components. */
export interface ComponentFilter {
  ids?: string;
  status?: string;
  enabled?: boolean;
  config_name?: string;
  tags?: string;
}

export function parseTags(s: string | undefined): [string, string][] {
  if (!s) return [];
  return s
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const i = kv.indexOf('=');
      return i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
    });
}

export function matcher(f: ComponentFilter, configs: ReadonlyMap<string, CfsConfiguration>, o: CfsOptions): (c: CfsComponent) => boolean {
  const ids = f.ids ? new Set(f.ids.split(',').filter(Boolean)) : undefined;
  const statuses = f.status ? new Set(f.status.split(',').filter(Boolean)) : undefined;
  const tags = parseTags(f.tags);
  return (c) =>
    (!ids || ids.has(c.id)) &&
    (f.enabled === undefined || c.enabled === f.enabled) &&
    (!f.config_name || c.desired_config === f.config_name) &&
    tags.every(([k, v]) => c.tags[k] === v) &&
    (!statuses || statuses.has(configurationStatus(c, configs, o)));
}

export interface ListQuery extends ComponentFilter {
  state_details?: boolean;
  config_details?: boolean;
  limit?: number;
  after_id?: string;
}

/** The wire view of a component for GET (configuration_status computed, state only on request). */
export function componentView(
  c: CfsComponent,
  configs: ReadonlyMap<string, CfsConfiguration>,
  o: CfsOptions,
  q: { state_details?: boolean; config_details?: boolean } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: c.id,
    desired_config: c.desired_config,
    enabled: c.enabled,
    error_count: c.error_count,
    tags: c.tags,
  };
  if (c.retry_policy !== undefined) out.retry_policy = c.retry_policy;
  if (q.state_details) out.state = c.state.map(wireLayer);
  if (q.config_details) out.desired_state = desiredState(c, configs, o);
  out.configuration_status = configurationStatus(c, configs, o);
  if (o.include_ara_links) out.logs = `https://ara.cmn.example/hosts?name=${encodeURIComponent(c.id)}`;
  return out;
}

/** The stored record as PATCH/PUT answer it (no computed status, state included). */
export function componentRecord(c: CfsComponent): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: c.id,
    desired_config: c.desired_config,
    state: c.state.map(wireLayer),
    error_count: c.error_count,
    enabled: c.enabled,
    tags: c.tags,
  };
  if (c.retry_policy !== undefined) out.retry_policy = c.retry_policy;
  return out;
}

function wireLayer(l: CfsStateLayer): CfsStateLayer {
  return { ...l };
}

function desiredState(c: CfsComponent, configs: ReadonlyMap<string, CfsConfiguration>, o: CfsOptions) {
  const cfg = c.desired_config ? configs.get(c.desired_config) : undefined;
  if (!cfg) return [];
  const statuses = layerStatuses(c, cfg, o);
  return cfg.layers.map((l: CfsLayer, i) => ({
    clone_url: l.clone_url ?? '',
    playbook: l.playbook || o.default_playbook,
    commit: l.commit ?? '',
    status: statuses[i],
    last_updated: cfg.last_updated,
    session_name: '',
  }));
}
