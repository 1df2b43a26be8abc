/**
 * HSM v2 routes (csm-services §4): State/Components GET with its filters, the Query POST (400
 * "Missing IDs" on empty ComponentIDs, 500 on unparsable JSON, unknown ids omitted, input ids
 * normalised), groups, partitions and lock status. Only nodes are modelled.
 */
import { canonicalXname } from '../../domain/xname.ts';
import type { SimNode } from '../types.ts';
import type { SimWorld } from '../world.ts';
import { json, multi, parseBool, problem, type Route } from './router.ts';

export function hsmComponent(n: SimNode): Record<string, unknown> {
  const c: Record<string, unknown> = {
    ID: n.id,
    Type: 'Node',
    State: n.hsmState,
    Flag: 'OK',
    Enabled: n.enabled,
    Role: n.role,
  };
  if (n.subRole) c.SubRole = n.subRole;
  c.NID = n.nid;
  c.NetType = 'Sling';
  c.Arch = n.arch;
  c.Class = n.class;
  if (n.locked) c.Locked = true;
  return c;
}

/** HSM filters: repeated values OR, different keys AND. Values as in GET query or Query POST body. */
interface Filter {
  ids?: string[];
  type?: string[];
  state?: string[];
  flag?: string[];
  role?: string[];
  subrole?: string[];
  enabled?: string[];
  arch?: string[];
  class?: string[];
  nid?: string[];
  partition?: string;
  group?: string;
}

function select(world: SimWorld, f: Filter): SimNode[] | string {
  const lower = (a?: string[]) => (a && a.length ? new Set(a.map((s) => s.toLowerCase())) : undefined);
  const [type, state, flag, role, subrole, arch, cls] = [f.type, f.state, f.flag, f.role, f.subrole, f.arch, f.class].map(lower);
  let enabled: boolean | undefined;
  if (f.enabled?.length) {
    const vals = f.enabled.map(parseBool);
    if (vals.some((v) => v === undefined)) return `invalid enabled value: ${f.enabled.join(',')}`;
    enabled = vals.length === 1 ? vals[0] : undefined;
  }
  const nids = f.nid?.length ? new Set(f.nid.map(Number)) : undefined;
  const inSet = (label: string | undefined, map: Map<string, string[]>) => (label ? new Set(map.get(label) ?? []) : undefined);
  const part = inSet(f.partition, world.partitions);
  const group = inSet(f.group, world.groups);
  const pool = f.ids ? f.ids.map((id) => world.node(canonicalXname(id))).filter((n): n is SimNode => !!n) : [...world.nodes.values()];
  const seen = new Set<string>();
  return pool.filter((n) => {
    if (seen.has(n.id)) return false;
    seen.add(n.id);
    return (
      (!type || type.has('node')) &&
      (!state || state.has(n.hsmState.toLowerCase())) &&
      (!flag || flag.has('ok')) &&
      (!role || role.has(n.role.toLowerCase())) &&
      (!subrole || subrole.has(n.subRole.toLowerCase())) &&
      (enabled === undefined || n.enabled === enabled) &&
      (!arch || arch.has(n.arch.toLowerCase())) &&
      (!cls || cls.has(n.class.toLowerCase())) &&
      (!nids || nids.has(n.nid)) &&
      (!part || part.has(n.id)) &&
      (!group || group.has(n.id))
    );
  });
}

const asList = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : undefined);

function groupView(label: string, ids: string[]) {
  return { label, description: '', tags: [], members: { ids } };
}

function partitionView(name: string, ids: string[]) {
  return { name, description: '', tags: [], members: { ids } };
}

export const hsmRoutes: Route[] = [
  {
    method: 'GET',
    path: '/hsm/v2/State/Components',
    service: 'hsm',
    handler: ({ world, query: q }) => {
      const f: Filter = {
        ids: q.has('id') ? multi(q, 'id') : undefined,
        type: multi(q, 'type'),
        state: multi(q, 'state'),
        flag: multi(q, 'flag'),
        role: multi(q, 'role'),
        subrole: multi(q, 'subrole'),
        enabled: multi(q, 'enabled'),
        arch: multi(q, 'arch'),
        class: multi(q, 'class'),
        nid: multi(q, 'nid'),
        partition: q.get('partition') ?? undefined,
        group: q.get('group') ?? undefined,
      };
      const r = select(world, f);
      if (typeof r === 'string') return problem(400, r);
      return json(200, { Components: r.map(hsmComponent) });
    },
  },
  {
    method: 'POST',
    path: '/hsm/v2/State/Components/Query',
    service: 'hsm',
    handler: ({ world, body, badJson }) => {
      // Quirk kept from hms-smd: a body it cannot decode is a 500, not a 400.
      if (badJson) return problem(500, 'error decoding JSON unexpected end of JSON input');
      const b = (body ?? {}) as Record<string, unknown>;
      const ids = asList(b.ComponentIDs);
      if (!ids || ids.length === 0) return problem(400, 'Missing IDs');
      const r = select(world, {
        ids,
        type: asList(b.type),
        state: asList(b.state),
        flag: asList(b.flag),
        role: asList(b.role),
        subrole: asList(b.subrole),
        enabled: asList(b.enabled),
        arch: asList(b.arch),
        class: asList(b.class),
        nid: asList(b.nid)?.map(String),
        partition: typeof b.partition === 'string' ? b.partition : undefined,
        group: typeof b.group === 'string' ? b.group : undefined,
      });
      if (typeof r === 'string') return problem(400, r);
      return json(200, { Components: r.map(hsmComponent) });
    },
  },
  {
    method: 'GET',
    path: '/hsm/v2/groups',
    service: 'hsm',
    handler: ({ world, query }) => {
      const only = query.get('group');
      const out = [...world.groups].filter(([label]) => !only || label === only).map(([l, ids]) => groupView(l, ids));
      return json(200, out);
    },
  },
  {
    method: 'GET',
    path: '/hsm/v2/groups/{group_label}',
    service: 'hsm',
    handler: ({ world, params }) => {
      const ids = world.groups.get(params.group_label!);
      return ids ? json(200, groupView(params.group_label!, ids)) : problem(404, 'No such group.');
    },
  },
  {
    method: 'GET',
    path: '/hsm/v2/partitions',
    service: 'hsm',
    handler: ({ world, query }) => {
      const only = query.get('partition');
      const out = [...world.partitions].filter(([n]) => !only || n === only).map(([n, ids]) => partitionView(n, ids));
      return json(200, out);
    },
  },
  {
    method: 'GET',
    path: '/hsm/v2/partitions/{partition_name}',
    service: 'hsm',
    handler: ({ world, params }) => {
      const ids = world.partitions.get(params.partition_name!);
      return ids ? json(200, partitionView(params.partition_name!, ids)) : problem(404, 'No such partition.');
    },
  },
  {
    method: 'GET',
    path: '/hsm/v2/locks/status',
    service: 'hsm',
    handler: ({ world, query }) => {
      const type = multi(query, 'type').map((t) => t.toLowerCase());
      const locked = parseBool(query.get('locked'));
      const nodes = type.length && !type.includes('node') ? [] : [...world.nodes.values()];
      const out = nodes
        .filter((n) => locked === undefined || n.locked === locked)
        .map((n) => ({ ID: n.id, Locked: n.locked, Reserved: false, ReservationDisabled: false }));
      return json(200, { Components: out, NotFound: [] });
    },
  },
];
