/**
 * PCS routes (csm-services §2): POST /transitions answers 200 with the id at once while the world
 * does the work; GET /transitions[/{id}] shows tasks moving to succeeded/failed; power-status by
 * POST (BOS) or GET, 400 on invalid xnames, an error-only entry for xnames PCS does not know.
 */
import { isXname } from '../../domain/xname.ts';
import { SUPPORTED_TRANSITIONS, canonicalOperation, type PcsTransition } from '../power.ts';
import type { SimWorld } from '../world.ts';
import { json, multi, problem, type Reply, type Route } from './router.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function counts(t: PcsTransition) {
  const c = { total: t.tasks.length, new: 0, 'in-progress': 0, failed: 0, succeeded: 0, 'un-supported': 0 };
  for (const k of t.tasks) {
    if (k.taskStatus === 'unsupported') c['un-supported']++;
    else c[k.taskStatus]++;
  }
  return c;
}

function summary(t: PcsTransition) {
  return {
    transitionID: t.transitionID,
    operation: t.operation,
    createTime: t.createTime,
    automaticExpirationTime: t.automaticExpirationTime,
    transitionStatus: t.transitionStatus,
    taskCounts: counts(t),
  };
}

function powerStatus(world: SimWorld, xnames: string[], powerFilter?: string, mgmtFilter?: string): Reply {
  if (powerFilter && !['on', 'off', 'undefined'].includes(powerFilter))
    return problem(400, `invalid PowerStateFilter type: ${powerFilter}`);
  if (mgmtFilter && !['available', 'unavailable'].includes(mgmtFilter))
    return problem(400, `invalid ManagementStateFilter type: ${mgmtFilter}`);
  const bad = xnames.filter((x) => !isXname(x));
  if (bad.length) return problem(400, `invalid xnames detected: ${bad.join(',')}`);
  const ids = xnames.length ? [...new Set(xnames)] : [...world.nodes.keys()];
  const status = [];
  for (const xname of ids) {
    const n = world.node(xname);
    if (!n) {
      // PCS fills only xname and error for components it has no record of.
      status.push({ xname, error: 'Component not found in component map.' });
      continue;
    }
    const seen = world.observedPower(n);
    const entry = {
      xname,
      ...seen,
      error: '',
      supportedPowerTransitions: SUPPORTED_TRANSITIONS,
      lastUpdated: n.powerUpdated,
    };
    if (powerFilter && entry.powerState !== powerFilter) continue;
    if (mgmtFilter && entry.managementState !== mgmtFilter) continue;
    status.push(entry);
  }
  return json(200, { status });
}

export const pcsRoutes: Route[] = [
  {
    method: 'POST',
    path: '/transitions',
    service: 'pcs',
    handler: ({ world, body, badJson }) => {
      if (badJson || typeof body !== 'object' || body === null) return problem(400, 'error decoding JSON');
      const b = body as { operation?: unknown; location?: unknown; taskDeadlineMinutes?: unknown };
      const op = typeof b.operation === 'string' ? canonicalOperation(b.operation) : undefined;
      if (!op) return problem(400, `invalid Operation type ${String(b.operation ?? '')}`);
      if (b.location !== undefined && !Array.isArray(b.location)) return problem(400, 'location must be an array');
      const xnames = ((b.location ?? []) as { xname?: unknown }[]).map((l) => String(l?.xname ?? ''));
      const id = world.transition(op, xnames);
      return json(200, { transitionID: id, operation: op }, { location: `../transitions/${id}` });
    },
  },
  {
    method: 'GET',
    path: '/transitions',
    service: 'pcs',
    handler: ({ world }) => json(200, { transitions: [...world.power.transitions.values()].map(summary) }),
  },
  {
    method: 'GET',
    path: '/transitions/{transitionID}',
    service: 'pcs',
    handler: ({ world, params }) => {
      const id = params.transitionID!;
      if (!UUID.test(id)) return problem(400, `invalid transitionID: ${id}`);
      const t = world.power.transitions.get(id);
      if (!t) return problem(404, `TransitionID ${id} not found`);
      return json(200, { ...summary(t), tasks: t.tasks.map((k) => ({ ...k })) });
    },
  },
  {
    method: 'POST',
    path: '/power-status',
    service: 'pcs',
    handler: ({ world, body, badJson }) => {
      if (badJson) return problem(400, 'error decoding JSON');
      const b = (body ?? {}) as { xname?: unknown; powerStateFilter?: unknown; managementStateFilter?: unknown };
      const xnames = Array.isArray(b.xname) ? b.xname.map(String) : [];
      const str = (v: unknown) => (typeof v === 'string' && v ? v.toLowerCase() : undefined);
      return powerStatus(world, xnames, str(b.powerStateFilter), str(b.managementStateFilter));
    },
  },
  {
    method: 'GET',
    path: '/power-status',
    service: 'pcs',
    handler: ({ world, query }) =>
      powerStatus(
        world,
        multi(query, 'xname'),
        query.get('powerStateFilter')?.toLowerCase() || undefined,
        query.get('managementStateFilter')?.toLowerCase() || undefined,
      ),
  },
];
