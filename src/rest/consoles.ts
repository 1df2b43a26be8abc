/**
 * bootorch's own REST extension beside BOS v2: `GET /bootorch/v1/components/{id}/console` (also under
 * /apis/bos), a node's kept serial console through the nodeConsole root field (the same access rule:
 * operators and admins, viewers only with console_viewers). Query parameters: attempt (ISO time),
 * after (a cursor), lines, search; snake_case JSON like the rest of the door.
 */
import type { NodeConsole } from '../api/generated/types.ts';
import { notFound, Problem } from './problem.ts';
import { ok, type Route } from './route.ts';

const int = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Problem(400, `${name}: must be a whole number`);
  return Number(v);
};

/** Full ISO time with milliseconds: an attempt is named by it exactly (`?attempt=`). */
const iso = (d: Date | string) => new Date(d).toISOString();

export const consoleRoutes: Route[] = [
  {
    method: 'get',
    path: '/bootorch/v1/components/:id/console',
    async handler({ call, params, query }) {
      let attempt: string | undefined;
      if (query.attempt !== undefined) {
        const t = new Date(query.attempt);
        if (Number.isNaN(t.getTime())) throw new Problem(400, 'attempt: must be an ISO 8601 time');
        attempt = t.toISOString();
      }
      const c = await call('nodeConsole', {
        componentId: params.id,
        attempt,
        after: query.after,
        lines: int('lines', query.lines),
        search: query.search,
      });
      if (!c) throw notFound('console of component', params.id!);
      return ok({
        component_id: c.componentId,
        attempt: iso(c.attempt),
        text: c.text,
        cursor: c.cursor,
        attempts: c.attempts.map((a) => ({ attempt: iso(a.attempt), bytes: a.bytes, first: iso(a.first), last: iso(a.last) })),
      });
    },
  },
];
