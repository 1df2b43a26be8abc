/**
 * bootorch's own REST extension beside BOS v2 (also under /apis/bos), Nova's rescue and unrescue
 * server actions as sessions (docs/rescue.md): `POST /bootorch/v1/rescue` and
 * `POST /bootorch/v1/unrescue` with `{template_name, limit, name}` create a RESCUE or UNRESCUE
 * session through createSession (the same checks, roles, tenants and rollout policy) and answer it
 * 201 as BOS answers a session; the session's status is BOS's `/v2/sessions/{id}/status`.
 */
import type { SessionOperation } from '../api/generated/types.ts';
import { object, onlyKeys, strings } from './body.ts';
import { ALREADY_EXISTS, Problem } from './problem.ts';
import { ok, type Route } from './route.ts';
import { sessionToBos } from './sessions.ts';

function rescueRoute(operation: Extract<SessionOperation, 'rescue' | 'unrescue'>): Route {
  return {
    method: 'post',
    path: `/bootorch/v1/${operation}`,
    conflictTitle: ALREADY_EXISTS,
    async handler({ call, body }) {
      const b = object(body);
      onlyKeys(b, ['name', 'template_name', 'limit']);
      if (b.template_name === undefined) throw new Problem(400, 'template_name: is required');
      strings(b, ['name', 'template_name', 'limit']);
      const r = await call('createSession', {
        input: {
          operation,
          templateName: b.template_name as string,
          name: b.name as string | undefined,
          limit: b.limit as string | undefined,
        },
      });
      return ok(sessionToBos(r.session), 201);
    },
  };
}

export const rescueRoutes: Route[] = [rescueRoute('rescue'), rescueRoute('unrescue')];
