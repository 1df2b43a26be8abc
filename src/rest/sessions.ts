/** /v2/sessions and /v2/sessions/{id}[/status]: V2SessionCreate in, V2Session and the extended status out. */
import type { CreateSessionInput } from '../api/generated/types.ts';
import type { SessionStatusParent } from '../api/views.ts';
import type { SessionParent } from '../api/views.ts';
import { enumValues } from '../api/enums.ts';
import { booleans, bosTime, object, oneOf, onlyKeys, strings, type Json } from './body.ts';
import { ALREADY_EXISTS, notFound, Problem } from './problem.ts';
import { getOne, noContent, ok, type RestRequest, type Route } from './route.ts';

/** BOS's operations; bootorch's rescue and unrescue have their own routes (rescue.ts), outside BOS's contract. */
const OPERATIONS = Object.values(enumValues.SessionOperation).filter((o) => o !== 'rescue' && o !== 'unrescue');
const STATES = Object.values(enumValues.SessionState);

/** A session as BOS answers it (V2Session); `tenant` only on a tenant's session, as BOS stores it. */
export function sessionToBos(s: SessionParent): Json {
  return {
    name: s.name,
    ...(s.tenant ? { tenant: s.tenant } : {}),
    operation: s.operation,
    template_name: s.templateName,
    limit: s.limit,
    stage: s.stage,
    components: s.components.join(','),
    include_disabled: s.includeDisabled,
    status: {
      status: s.status.status,
      start_time: bosTime(s.status.startTime),
      end_time: bosTime(s.status.endTime) ?? null,
      error: s.status.error ?? null,
    },
  };
}

/** V2SessionExtendedStatus: error groups keyed by their text, BOS's `{count, list}`. */
export function extendedStatusToBos(x: SessionStatusParent): Json {
  return {
    status: x.status,
    managed_components_count: x.managedComponentsCount,
    phases: {
      percent_complete: x.phases.percentComplete,
      percent_powering_on: x.phases.percentPoweringOn,
      percent_powering_off: x.phases.percentPoweringOff,
      percent_configuring: x.phases.percentConfiguring,
    },
    percent_successful: x.percentSuccessful,
    percent_failed: x.percentFailed,
    percent_staged: x.percentStaged,
    error_summary: Object.fromEntries(x.errorSummary.map((g) => [g.key, { count: g.count, list: g.list }])),
    timing: { start_time: bosTime(x.timing.startTime), end_time: bosTime(x.timing.endTime) ?? null, duration: x.timing.duration },
  };
}

function createInput(body: unknown): CreateSessionInput {
  const b = object(body);
  onlyKeys(b, ['name', 'operation', 'template_name', 'limit', 'stage', 'include_disabled']);
  if (b.template_name === undefined) throw new Problem(400, 'template_name: is required');
  booleans(b, ['stage', 'include_disabled']);
  strings(b, ['name', 'template_name', 'limit']);
  return {
    operation: oneOf(b.operation, OPERATIONS, 'operation'),
    // Strings, booleans or absent, as strings() and booleans() checked above.
    templateName: b.template_name as string,
    name: b.name as string | undefined,
    limit: b.limit as string | undefined,
    stage: (b.stage as boolean | undefined) ?? false,
    includeDisabled: (b.include_disabled as boolean | undefined) ?? false,
  };
}

/** status / min_age / max_age, as the `sessions` and `deleteSessions` fields take them. */
function filters(q: RestRequest['query']): Json {
  return {
    status: q.status === undefined ? undefined : oneOf(q.status, STATES, 'status'),
    minAge: q.min_age,
    maxAge: q.max_age,
  };
}

async function session(r: RestRequest): Promise<SessionParent> {
  const s = await r.call('session', { name: r.params.name });
  if (!s) throw notFound('session', r.params.name!);
  return s;
}

export const sessionRoutes: Route[] = [
  {
    method: 'post',
    path: '/v2/sessions',
    conflictTitle: ALREADY_EXISTS,
    handler: async ({ call, body }) => {
      const r = await call('createSession', { input: createInput(body) });
      return ok(sessionToBos(r.session), 201);
    },
  },
  {
    method: 'get',
    path: '/v2/sessions',
    handler: async ({ call, query }) => ok((await call('sessions', filters(query))).map(sessionToBos)),
  },
  {
    method: 'delete',
    path: '/v2/sessions',
    handler: async ({ call, query }) => {
      await call('deleteSessions', filters(query));
      return noContent;
    },
  },
  getOne('/v2/sessions/:name', 'session', 'name', 'session', sessionToBos),
  {
    // BOS's own operators PATCH a session's status; bootorch's engine owns it, so nobody else may.
    method: 'patch',
    path: '/v2/sessions/:name',
    handler: async (r) => {
      await session(r);
      throw new Problem(
        400,
        "bootorch's engine keeps session status itself; PATCH /v2/sessions/{id} is a BOS-internal call it does not take",
      );
    },
  },
  {
    method: 'delete',
    path: '/v2/sessions/:name',
    handler: async ({ call, params }) => {
      await call('deleteSession', { name: params.name });
      return noContent;
    },
  },
  getOne('/v2/sessions/:name/status', 'sessionStatus', 'name', 'session', extendedStatusToBos),
  {
    // BOS's completion operator asks the API to save the status; bootorch's saves it when the session
    // completes. Answered as the contract says (the session), without a write.
    method: 'post',
    path: '/v2/sessions/:name/status',
    handler: async (r) => ok(sessionToBos(await session(r))),
  },
];
