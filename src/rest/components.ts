/**
 * /v2/components[/{id}] and /v2/applystaged. The reporter's PATCH (`{"id": X, "actual_state":
 * {"bss_token": T}}`, nothing else) is `reportBootState`, the batched report path with BOS's 409 rule;
 * every other PATCH is `patchComponent`.
 */
import type { Component, ComponentInput } from '../api/generated/types.ts';
import { componentView, encodeCursor, type ComponentConnectionParent } from '../api/views.ts';
import { enumValues } from '../api/enums.ts';
import { canonicalXname } from '../domain/xname.ts';
import { bosTime, defined, isObject, object, oneOf, onlyKeys, type Json } from './body.ts';
import { camel, convertKeys } from './names.ts';
import { notFound, Problem } from './problem.ts';
import { getOne, noContent, ok, type RestRequest, type Route } from './route.ts';

const FIELDS = [
  'id',
  'actual_state',
  'desired_state',
  'staged_state',
  'last_action',
  'event_stats',
  'status',
  'enabled',
  'error',
  'session',
  'retry_policy',
];
const PHASES = Object.values(enumValues.ComponentPhase);
const STATUSES = Object.values(enumValues.ComponentStatus);
/** The GraphQL door's largest page; page_size 0 (everything) reads page after page. */
const PAGE = 10_000;

const artifacts = (a: Component['actualState']['bootArtifacts']) => ({
  kernel: a.kernel,
  kernel_parameters: a.kernelParameters,
  initrd: a.initrd,
});

/** A component as BOS answers it (V2Component): unset timestamps, actions and retry policies left out. */
export function componentToBos(c: Component): Json {
  return defined({
    id: c.id,
    actual_state: defined({
      boot_artifacts: artifacts(c.actualState.bootArtifacts),
      bss_token: c.actualState.bssToken,
      last_updated: bosTime(c.actualState.lastUpdated),
    }),
    desired_state: defined({
      boot_artifacts: artifacts(c.desiredState.bootArtifacts),
      configuration: c.desiredState.configuration,
      bss_token: c.desiredState.bssToken,
      last_updated: bosTime(c.desiredState.lastUpdated),
    }),
    staged_state: defined({
      boot_artifacts: artifacts(c.stagedState.bootArtifacts),
      configuration: c.stagedState.configuration,
      session: c.stagedState.session,
      last_updated: bosTime(c.stagedState.lastUpdated),
    }),
    last_action: defined({
      action: c.lastAction.action || undefined,
      failed: c.lastAction.failed,
      last_updated: bosTime(c.lastAction.lastUpdated),
    }),
    event_stats: {
      power_on_attempts: c.eventStats.powerOnAttempts,
      power_off_graceful_attempts: c.eventStats.powerOffGracefulAttempts,
      power_off_forceful_attempts: c.eventStats.powerOffForcefulAttempts,
    },
    status: { phase: c.status.phase, status: c.status.status, status_override: c.status.statusOverride },
    enabled: c.enabled,
    error: c.error,
    session: c.session,
    retry_policy: c.retryPolicy,
  });
}

/**
 * A V2Component body as the GraphQL ComponentInput. `id` (the reporter sends it) and the read-only
 * fields a GET gave (`status.status`, every `last_updated`) are dropped: the server sets those.
 */
function componentInput(body: unknown, at = ''): ComponentInput {
  const b = object(body, at);
  onlyKeys(b, FIELDS, at);
  const rest: Json = {};
  for (const [k, v] of Object.entries(b)) {
    if (k === 'id') continue;
    if (isObject(v)) {
      const { last_updated: _updated, ...inner } = v;
      rest[k] = k === 'status' ? (({ status: _status, ...s }) => s)(inner) : inner;
    } else rest[k] = v;
  }
  // Its field types are the resolver's to check (zod at the boundary, errors naming the field).
  return convertKeys(rest, camel) as ComponentInput;
}

/** The bos-reporter's body: an id at most, and an actual_state holding only the token. */
function reportedToken(body: unknown): string | null {
  if (!isObject(body) || !isObject(body.actual_state)) return null;
  if (Object.keys(body).some((k) => k !== 'id' && k !== 'actual_state')) return null;
  const a = body.actual_state;
  return Object.keys(a).length === 1 && typeof a.bss_token === 'string' ? a.bss_token : null;
}

const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

function listFilter(q: RestRequest['query']): Json {
  let enabled: boolean | undefined;
  if (q.enabled !== undefined) {
    const e = q.enabled.toLowerCase();
    if (e !== 'true' && e !== 'false') throw new Problem(400, 'enabled: must be true or false');
    enabled = e === 'true';
  }
  return defined({
    ids: list(q.ids),
    session: q.session,
    stagedSession: q.staged_session,
    enabled,
    phase: q.phase === undefined ? undefined : oneOf(q.phase, PHASES, 'phase'),
    status: list(q.status)?.map((s) => oneOf(s, STATUSES, 'status')),
  });
}

function pageSize(v: string | undefined): number {
  if (v === undefined) return 0;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 1_048_576) throw new Problem(400, 'page_size: must be a whole number from 0 to 1048576');
  return n;
}

async function listComponents({ call, query }: RestRequest): Promise<Json[]> {
  const filter = listFilter(query);
  let remaining = pageSize(query.page_size) || Infinity;
  let after = query.start_after_id ? encodeCursor(query.start_after_id) : null;
  const out: Json[] = [];
  while (remaining > 0) {
    const page = await call('components', { filter, first: Math.min(remaining, PAGE), after, orderBy: 'id', descending: false });
    out.push(...page.rows.map((r) => componentToBos(componentView(r))));
    if (!page.hasNextPage || !page.rows.length) break;
    remaining -= page.rows.length;
    after = encodeCursor(page.rows.at(-1)!.id);
  }
  return out;
}

async function patchOne({ call, params, body }: RestRequest) {
  const token = reportedToken(body);
  if (token === null) return ok(componentToBos(await call('patchComponent', { id: params.id, patch: componentInput(body) })));
  const r = await call('reportBootState', { id: params.id, bssToken: token });
  if ('code' in r) throw new Problem(r.code === 'CONFLICT' ? 409 : 404, r.message);
  // The component as GraphQL answers it when asked for (read after the report's commit).
  return ok(componentToBos(await call('BootStateReported.component', {}, r)));
}

/** PATCH /v2/components: `{patch, filters}` (the CLI's updatemany), or a list of V2ComponentWithId. */
async function patchMany({ call, query, body }: RestRequest) {
  const skipBadIds = query.skip_bad_ids?.toLowerCase() === 'true';
  if (Array.isArray(body)) return ok(await patchEach(call, body, skipBadIds));
  const b = object(body);
  onlyKeys(b, ['patch', 'filters']);
  if (b.patch === undefined) throw new Problem(400, 'patch: is required');
  const f = object(b.filters ?? null, 'filters');
  onlyKeys(f, ['ids', 'session'], 'filters');
  // The contract's two filter forms carry the other key as null or ''; patchComponents wants exactly one.
  const given = (v: unknown) => v !== undefined && v !== null && v !== '';
  if (given(f.ids) && typeof f.ids !== 'string') throw new Problem(400, 'filters.ids: must be a comma-separated string of ids');
  const filter = defined({ ids: given(f.ids) ? list(f.ids as string) : undefined, session: given(f.session) ? f.session : undefined });
  const rows = await call('patchComponents', { filter, patch: componentInput(b.patch, 'patch'), skipBadIds });
  return ok(rows.map(componentToBos));
}

/** A list of components, each patched through patchComponent (each its own transaction), unknown ids first. */
async function patchEach(call: RestRequest['call'], body: unknown[], skipBadIds: boolean) {
  const items = body.map((x, i) => {
    const o = object(x, `[${i}]`);
    if (typeof o.id !== 'string') throw new Problem(400, `[${i}].id: is required`);
    return { id: o.id, patch: componentInput(o, `[${i}]`) };
  });
  const known = new Set<string>();
  for (let i = 0; i < items.length; i += PAGE) {
    const ids = items.slice(i, i + PAGE).map((x) => x.id);
    const page = await call('components', { filter: { ids }, first: PAGE, after: null, orderBy: 'id', descending: false });
    for (const r of page.rows) known.add(r.id);
  }
  const missing = items.filter((x) => !known.has(canonicalXname(x.id)));
  if (missing.length && !skipBadIds)
    throw notFound(
      'component',
      missing
        .slice(0, 10)
        .map((x) => x.id)
        .join(','),
    );
  const out: Json[] = [];
  for (const x of items) if (known.has(canonicalXname(x.id))) out.push(componentToBos(await call('patchComponent', x)));
  return out;
}

export const componentRoutes: Route[] = [
  { method: 'get', path: '/v2/components', handler: async (r) => ok(await listComponents(r)) },
  {
    method: 'put',
    path: '/v2/components',
    handler: async ({ call, body }) => {
      if (!Array.isArray(body)) throw new Problem(400, 'must be a JSON list of components');
      const components = body.map((x, i) => {
        const o = object(x, `[${i}]`);
        // The id's type is the resolver's to check, as the other fields'.
        return { ...componentInput(o, `[${i}]`), id: o.id as string };
      });
      return ok((await call('putComponents', { components })).map(componentToBos));
    },
  },
  { method: 'patch', path: '/v2/components', handler: patchMany },
  getOne('/v2/components/:id', 'component', 'id', 'component', componentToBos),
  {
    method: 'put',
    path: '/v2/components/:id',
    handler: async ({ call, params, body }) =>
      ok(componentToBos(await call('putComponent', { id: params.id, input: componentInput(body) }))),
  },
  { method: 'patch', path: '/v2/components/:id', handler: patchOne },
  {
    method: 'delete',
    path: '/v2/components/:id',
    handler: async ({ call, params }) => {
      await call('deleteComponent', { id: params.id });
      return noContent;
    },
  },
  {
    method: 'post',
    path: '/v2/applystaged',
    handler: async ({ call, body }) => {
      const b = object(body);
      onlyKeys(b, ['xnames']);
      if (!Array.isArray(b.xnames) || !b.xnames.every((x) => typeof x === 'string'))
        throw new Problem(400, 'xnames: must be a list of xnames');
      const r = await call('applyStaged', { xnames: b.xnames });
      return ok({ succeeded: r.succeeded, failed: r.failed, ignored: r.ignored });
    },
  },
];
