/**
 * CFS v3 routes (csm-services §1.3, §6.1): components with filters and `next` paging, both bulk PATCH
 * forms (list: 404 if any id is missing, checked before writing; dict: filters, missing ids ignored),
 * single-component CRUD, configurations, options, and a read-only view of the batcher's sessions.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { componentRecord, componentView, type ComponentPatch, type ListQuery } from '../cfs.ts';
import type { CfsLayer } from '../types.ts';
import type { SimWorld } from '../world.ts';
import { json, parseBool, problem, type Ctx, type Reply, type Route } from './router.ts';
import { cfsOptionsView, patchCfsOptions, sessionView } from './cfs-views.ts';

const STATUSES = ['unconfigured', 'pending', 'failed', 'configured'];
const layerIn = z
  .object({
    clone_url: z.string().optional(),
    playbook: z.string().optional(),
    commit: z.string().optional(),
    status: z.enum(['applied', 'failed', 'skipped', 'incomplete']).optional(),
    session_name: z.string().optional(),
    last_updated: z.string().optional(),
  })
  .strict();
const componentIn = z
  .object({
    id: z.string().optional(),
    desired_config: z.string().max(60).optional(),
    state: z.array(layerIn).optional(),
    state_append: layerIn.optional(),
    error_count: z.number().int().min(0).optional(),
    retry_policy: z.number().int().optional(),
    enabled: z.boolean().optional(),
    tags: z.record(z.string(), z.string()).optional(),
  })
  .strict();
const filtersIn = z
  .object({
    ids: z.string().optional(),
    status: z.string().optional(),
    enabled: z.boolean().optional(),
    config_name: z.string().optional(),
    tags: z.string().optional(),
  })
  .strict();

/** connexion-style 400 with the first schema problem; read-only fields are dropped first. */
function parseComponent(body: unknown): { patch: ComponentPatch & { id?: string } } | { error: Reply } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { error: problem(400, 'body must be an object') };
  const { configuration_status: _s, logs: _l, desired_state: _d, ...rest } = body as Record<string, unknown>;
  const r = componentIn.safeParse(rest);
  if (!r.success) return { error: problem(400, `${r.error.issues[0]!.path.join('.')}: ${r.error.issues[0]!.message}`) };
  return { patch: r.data };
}

function listQuery(q: URLSearchParams): ListQuery | string {
  const out: ListQuery = {};
  for (const k of ['ids', 'status', 'config_name', 'tags', 'after_id'] as const) if (q.get(k)) out[k] = q.get(k)!;
  if (out.status && out.status.split(',').some((s) => !STATUSES.includes(s))) return `invalid status: ${out.status}`;
  for (const k of ['enabled', 'state_details', 'config_details'] as const) {
    if (!q.get(k)) continue;
    const v = parseBool(q.get(k));
    if (v === undefined) return `${k} must be a boolean`;
    out[k] = v;
  }
  if (q.get('limit')) {
    const n = Number(q.get('limit'));
    if (!Number.isInteger(n) || n < 1) return 'limit must be a positive integer';
    out.limit = n;
  }
  return out;
}

const notFound = () => problem(404, 'The component was not found.', 'Component not found.');

function patchMany({ world, body, badJson }: Ctx): Reply {
  if (badJson) return problem(400, 'invalid JSON');
  if (Array.isArray(body)) {
    const patches = body.map(parseComponent);
    const bad = patches.find((p) => 'error' in p);
    if (bad && 'error' in bad) return bad.error;
    const list = patches.map((p) => (p as { patch: ComponentPatch & { id?: string } }).patch);
    if (list.some((p) => !p.id)) return problem(400, 'every patch in the list needs an id');
    const missing = list.filter((p) => !world.cfs.components.has(p.id!)).map((p) => p.id);
    if (missing.length) return problem(404, `Components not found: ${missing.join(', ')}`, 'Component not found.');
    for (const { id, ...p } of list) world.cfs.patch(id!, p);
    return json(200, { component_ids: list.map((p) => p.id) });
  }
  const b = body as { patch?: unknown; filters?: unknown } | undefined;
  if (!b || typeof b !== 'object' || !('patch' in b) || !('filters' in b))
    return problem(400, 'body must be a list of components or {patch, filters}');
  const p = parseComponent(b.patch);
  if ('error' in p) return p.error;
  const f = filtersIn.safeParse(b.filters ?? {});
  if (!f.success) return problem(400, `filters: ${f.error.issues[0]!.message}`);
  const { id: _drop, ...patch } = p.patch;
  return json(200, { component_ids: world.cfs.patchWhere(f.data, patch) });
}

function putConfiguration(world: SimWorld, name: string, body: unknown): Reply {
  if (!name || name.length > 60) return problem(400, 'configuration name must be 1 to 60 characters');
  const b = body as { layers?: unknown; description?: unknown } | undefined;
  if (!b || !Array.isArray(b.layers)) return problem(400, 'layers: required list');
  const layers: CfsLayer[] = [];
  for (const raw of b.layers as Record<string, unknown>[]) {
    const l: CfsLayer = {};
    for (const k of ['name', 'clone_url', 'source', 'playbook', 'commit', 'branch'] as const)
      if (typeof raw?.[k] === 'string') l[k] = raw[k] as string;
    if (!l.playbook) return problem(400, 'every layer needs a playbook');
    if (!!l.clone_url === !!l.source) return problem(400, 'a layer needs exactly one of clone_url and source');
    if (l.commit && l.branch) return problem(400, 'commit and branch are mutually exclusive');
    if (l.commit && !/^[a-f0-9]{40}$/.test(l.commit)) return problem(400, `invalid commit ${l.commit}`);
    // CFS clones the repo to turn a branch into its head commit; the simulator derives a stable one.
    if (l.branch)
      l.commit = createHash('sha1')
        .update(`${l.clone_url ?? l.source}#${l.branch}`)
        .digest('hex');
    layers.push(l);
  }
  const r = world.cfs.putConfiguration(name, layers, typeof b.description === 'string' ? b.description : undefined);
  return typeof r === 'string' ? problem(400, r) : json(200, r);
}

export const cfsRoutes: Route[] = [
  {
    method: 'GET',
    path: '/v3/components',
    service: 'cfs',
    handler: ({ world, query }) => {
      const q = listQuery(query);
      if (typeof q === 'string') return problem(400, q);
      const page = world.cfs.list(q);
      const components = page.components.map((c) => componentView(c, world.cfs.configurations, world.cfs.options, q));
      return json(200, { components, next: page.next });
    },
  },
  { method: 'PATCH', path: '/v3/components', service: 'cfs', handler: patchMany },
  {
    method: 'PUT',
    path: '/v3/components',
    service: 'cfs',
    handler: ({ world, body }) => {
      if (!Array.isArray(body)) return problem(400, 'body must be a list of components');
      const list = body.map(parseComponent);
      for (const p of list) if ('error' in p) return p.error;
      const ok = list.map((p) => (p as { patch: ComponentPatch & { id?: string } }).patch);
      if (ok.some((p) => !p.id)) return problem(400, 'every component needs an id');
      for (const { id, ...p } of ok) world.cfs.put(id!, p);
      return json(200, { component_ids: ok.map((p) => p.id) });
    },
  },
  {
    method: 'GET',
    path: '/v3/components/{component_id}',
    service: 'cfs',
    handler: ({ world, params, query }) => {
      const c = world.cfs.components.get(params.component_id!);
      if (!c) return notFound();
      const q = { state_details: parseBool(query.get('state_details')), config_details: parseBool(query.get('config_details')) };
      return json(200, componentView(c, world.cfs.configurations, world.cfs.options, q));
    },
  },
  {
    method: 'PUT',
    path: '/v3/components/{component_id}',
    service: 'cfs',
    handler: ({ world, params, body }) => {
      const p = parseComponent(body);
      if ('error' in p) return p.error;
      const { id: _drop, ...rest } = p.patch;
      return json(200, componentRecord(world.cfs.put(params.component_id!, rest)));
    },
  },
  {
    method: 'PATCH',
    path: '/v3/components/{component_id}',
    service: 'cfs',
    handler: ({ world, params, body }) => {
      const p = parseComponent(body);
      if ('error' in p) return p.error;
      const { id: _drop, ...rest } = p.patch;
      const c = world.cfs.patch(params.component_id!, rest);
      return c ? json(200, componentRecord(c)) : notFound();
    },
  },
  {
    method: 'DELETE',
    path: '/v3/components/{component_id}',
    service: 'cfs',
    handler: ({ world, params }) => (world.cfs.delete(params.component_id!) ? { status: 204 } : notFound()),
  },
  {
    method: 'GET',
    path: '/v3/configurations',
    service: 'cfs',
    handler: ({ world }) => json(200, { configurations: [...world.cfs.configurations.values()], next: null }),
  },
  {
    method: 'GET',
    path: '/v3/configurations/{configuration_id}',
    service: 'cfs',
    handler: ({ world, params }) => {
      const c = world.cfs.configurations.get(params.configuration_id!);
      return c ? json(200, c) : problem(404, 'The configuration was not found.', 'Configuration not found');
    },
  },
  {
    method: 'PUT',
    path: '/v3/configurations/{configuration_id}',
    service: 'cfs',
    handler: ({ world, params, body }) => putConfiguration(world, params.configuration_id!, body),
  },
  {
    method: 'DELETE',
    path: '/v3/configurations/{configuration_id}',
    service: 'cfs',
    handler: ({ world, params }) => {
      const r = world.cfs.deleteConfiguration(params.configuration_id!);
      if (r === 'missing') return problem(404, 'The configuration was not found.', 'Configuration not found');
      if (r === 'in use') return problem(400, 'Configuration is in use by one or more components', 'Configuration is in use');
      return { status: 204 };
    },
  },
  { method: 'GET', path: '/v3/options', service: 'cfs', handler: ({ world }) => json(200, cfsOptionsView(world)) },
  { method: 'PATCH', path: '/v3/options', service: 'cfs', handler: ({ world, body }) => patchCfsOptions(world, body) },
  {
    method: 'GET',
    path: '/v3/sessions',
    service: 'cfs',
    handler: ({ world }) => json(200, { sessions: [...world.batcher.sessions.values()].map(sessionView), next: null }),
  },
  {
    method: 'GET',
    path: '/v3/sessions/{session_name}',
    service: 'cfs',
    handler: ({ world, params }) => {
      const s = world.batcher.sessions.get(params.session_name!);
      return s ? json(200, sessionView(s)) : problem(404, 'The session was not found.', 'Session not found');
    },
  },
];
