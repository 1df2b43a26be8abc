/** What a REST handler gets and gives back; src/rest/router.ts does the HTTP around it. */
import type { ArgsOf, Call, ResultOf } from './call.ts';
import { notFound } from './problem.ts';

export interface RestRequest {
  /** Path parameters, decoded. */
  params: Record<string, string>;
  /** Query parameters: the first value of each (BOS uses only the first filter of each type). */
  query: Record<string, string | undefined>;
  body: unknown;
  /** The shared root fields, as this request's caller. */
  call: Call;
}

export interface Reply {
  status: number;
  /** JSON body; none for 204. */
  body?: unknown;
}

export interface Route {
  method: 'get' | 'put' | 'patch' | 'post' | 'delete';
  /** Under /v2 (or `/` for the versions document), in express syntax. */
  path: string;
  handler(r: RestRequest): Promise<Reply>;
  /** Title of this route's 409 problem (the contract names two). */
  conflictTitle?: string;
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body });
export const noContent: Reply = { status: 204 };

/** GET of one resource: the root field's answer (by the path parameter `param`) translated, or 404 when it is null. */
export function getOne<F extends 'component' | 'session' | 'sessionStatus' | 'sessionTemplate'>(
  path: string,
  field: F,
  param: keyof ArgsOf<F> & ('name' | 'id'),
  what: string,
  toBos: (v: NonNullable<ResultOf<F>>) => unknown,
): Route {
  return {
    method: 'get',
    path,
    async handler({ call, params }) {
      // One argument, the path parameter, for each of these fields (ArgsOf<F> is { name } or { id }).
      const v: ResultOf<F> = await (call as (f: F, a: Record<string, string | undefined>) => Promise<ResultOf<F>>)(field, {
        [param]: params[param],
      });
      if (v === null || v === undefined) throw notFound(what, params[param]!);
      return ok(toBos(v as NonNullable<ResultOf<F>>));
    },
  };
}
