/**
 * The CFS database: components (kept in id order for `next` paging) and configurations. Every write
 * calls `changed()` so the batcher looks again; reads compute configuration_status on the fly.
 */
import {
  DEFAULT_CFS_OPTIONS,
  cfsTime,
  configurationStatus,
  matcher,
  newComponent,
  patchComponent,
  type CfsOptions,
  type ComponentFilter,
  type ComponentPatch,
  type ListQuery,
} from './cfs.ts';
import type { ConfigurationStatus } from '../domain/readings.ts';
import type { CfsComponent, CfsConfiguration, CfsLayer } from './types.ts';

export interface ListResult {
  components: CfsComponent[];
  /** The original query with after_id, when more results exist (CFS passes every query arg back). */
  next: Record<string, unknown> | null;
}

export class CfsStore {
  readonly components = new Map<string, CfsComponent>();
  readonly configurations = new Map<string, CfsConfiguration>();
  readonly options: CfsOptions;
  private sorted?: string[];

  /** `changed(id)` after a component write, `changed()` when anything may have changed (configurations). */
  constructor(
    o: Partial<CfsOptions> = {},
    private readonly changed: (id?: string) => void = () => {},
  ) {
    this.options = { ...DEFAULT_CFS_OPTIONS, ...o };
  }

  status(id: string): ConfigurationStatus | undefined {
    const c = this.components.get(id);
    return c && configurationStatus(c, this.configurations, this.options);
  }

  /** PUT /v3/components/{id}: create or replace (defaults filled like the hwsync agent's body). */
  put(id: string, body: ComponentPatch): CfsComponent {
    if (!this.components.has(id)) this.sorted = undefined;
    const c = newComponent(id, body);
    this.components.set(id, c);
    this.changed(id);
    return c;
  }

  /** PATCH /v3/components/{id}; undefined when the component does not exist. */
  patch(id: string, p: ComponentPatch): CfsComponent | undefined {
    const c = this.components.get(id);
    if (!c) return undefined;
    const next = patchComponent(c, p, cfsTime());
    this.components.set(id, next);
    this.changed(id);
    return next;
  }

  delete(id: string): boolean {
    this.sorted = undefined;
    const had = this.components.delete(id);
    if (had) this.changed(id);
    return had;
  }

  /** PATCH /v3/components dict form: every existing component matching all filters; empty filters match all. */
  patchWhere(filters: ComponentFilter, p: ComponentPatch): string[] {
    const match = matcher(filters, this.configurations, this.options);
    const ids = filters.ids ? filters.ids.split(',').filter((id) => this.components.has(id)) : this.sortedIds();
    const now = cfsTime();
    const out: string[] = [];
    for (const id of new Set(ids)) {
      const c = this.components.get(id)!;
      if (!match(c)) continue;
      this.components.set(id, patchComponent(c, p, now));
      out.push(id);
      this.changed(id);
    }
    return out;
  }

  /** GET /v3/components: filter, sort by id, page by limit/after_id. */
  list(q: ListQuery): ListResult {
    const limit = q.limit ?? this.options.default_page_size;
    const match = matcher(q, this.configurations, this.options);
    let ids: string[];
    if (q.ids) ids = [...new Set(q.ids.split(',').filter((id) => this.components.has(id)))].sort();
    else ids = this.sortedIds();
    let i = 0;
    if (q.after_id) {
      i = lowerBound(ids, q.after_id);
      if (ids[i] === q.after_id) i++;
    }
    const out: CfsComponent[] = [];
    for (; i < ids.length && out.length < limit; i++) {
      const c = this.components.get(ids[i]!)!;
      if (match(c)) out.push(c);
    }
    // CFS answers `next` whenever it stopped on a full page with more keys left to scan.
    let more = false;
    if (out.length === limit) for (let j = i; j < ids.length && !more; j++) more = match(this.components.get(ids[j]!)!);
    const next = more
      ? {
          ids: q.ids ?? '',
          status: q.status ?? '',
          enabled: q.enabled ?? null,
          config_name: q.config_name ?? '',
          state_details: q.state_details ?? false,
          config_details: q.config_details ?? false,
          tags: q.tags ?? '',
          limit,
          after_id: out.at(-1)!.id,
        }
      : null;
    return { components: out, next };
  }

  /** PUT /v3/configurations/{name}. 400-worthy problems are returned as text. */
  putConfiguration(name: string, layers: CfsLayer[], description?: string): CfsConfiguration | string {
    const seen = new Set<string>();
    for (const l of layers) {
      const key = `${l.clone_url ?? l.source}\u0000${l.playbook}`;
      if (seen.has(key)) return `Two layers cannot use the same repo and playbook: ${l.clone_url ?? l.source} ${l.playbook}`;
      seen.add(key);
    }
    const cfg: CfsConfiguration = { name, last_updated: cfsTime(), layers: layers.map((l) => ({ ...l })) };
    if (description !== undefined) cfg.description = description;
    this.configurations.set(name, cfg);
    this.changed();
    return cfg;
  }

  deleteConfiguration(name: string): 'deleted' | 'missing' | 'in use' {
    if (!this.configurations.has(name)) return 'missing';
    for (const c of this.components.values()) if (c.desired_config === name) return 'in use';
    this.configurations.delete(name);
    this.changed();
    return 'deleted';
  }

  private sortedIds(): string[] {
    this.sorted ??= [...this.components.keys()].sort();
    return this.sorted;
  }
}

function lowerBound(a: string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
