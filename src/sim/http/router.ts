/**
 * A tiny router for the simulator's HTTP face: routes are (method, path template, service), matched
 * after gateway-style prefixes are stripped, so `/apis/smd/hsm/v2/...` and `/hsm/v2/...` are the same
 * route, and PCS answers both at `/power-control/v1/...` and at its in-mesh root.
 */
import type { SimService } from '../types.ts';
import type { SimWorld } from '../world.ts';

export interface Ctx {
  world: SimWorld;
  method: string;
  /** Path after prefix stripping, without the query. */
  path: string;
  query: URLSearchParams;
  params: Record<string, string>;
  /** Parsed JSON body; undefined when empty. */
  body: unknown;
  /** True when a non-empty body was not valid JSON. */
  badJson: boolean;
  headers: Record<string, string | string[] | undefined>;
  /** The node whose own BMC this request came to (a BMC farm or host listener), if any. */
  bmc?: string;
}

export interface Reply {
  status: number;
  json?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface Route {
  method: string;
  /** Path template, `{name}` for one segment, `{name+}` for the rest. */
  path: string;
  service: SimService;
  handler: (ctx: Ctx) => Reply;
}

export interface CompiledRoute extends Route {
  re: RegExp;
  names: string[];
  /** `METHOD /template`, the name calls are counted under (same as the adapters' EP names). */
  endpoint: string;
}

export function compile(routes: Route[]): CompiledRoute[] {
  return routes.map((r) => {
    const names: string[] = [];
    const src = r.path.replace(/[.]/g, '\\.').replace(/\{(\w+)(\+?)\}/g, (_m, name: string, rest: string) => {
      names.push(name);
      return rest ? '(.+)' : '([^/]+)';
    });
    return { ...r, re: new RegExp(`^${src}/?$`), names, endpoint: `${r.method} ${r.path}` };
  });
}

const PREFIXES: [RegExp, string][] = [
  [/^\/apis\/smd(?=\/hsm\/)/, ''],
  [/^\/apis\/bss(?=\/boot\/)/, ''],
  [/^\/apis\/cfs(?=\/v3\b)/, ''],
  [/^\/(apis\/)?power-control\/v1(?=\/)/, ''],
];

export function stripPrefix(path: string): string {
  for (const [re, to] of PREFIXES) if (re.test(path)) return path.replace(re, to);
  return path;
}

/** Find the route; `allowed` lists methods of a path that matched with another method (405). */
export function match(
  routes: CompiledRoute[],
  method: string,
  path: string,
): { route: CompiledRoute; params: Record<string, string> } | { allowed: string[] } {
  const allowed: string[] = [];
  for (const r of routes) {
    const m = r.re.exec(path);
    if (!m) continue;
    if (r.method !== method) {
      allowed.push(r.method);
      continue;
    }
    const params: Record<string, string> = {};
    r.names.forEach((n, i) => (params[n] = decodeURIComponent(m[i + 1]!)));
    return { route: r, params };
  }
  return { allowed };
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, json: body, headers };
}

/** RFC 7807 problem, as CFS (connexion), PCS, BSS and HSM answer errors. */
export function problem(status: number, detail: string, title = TITLES[status] ?? 'Error'): Reply {
  return { status, json: { type: 'about:blank', title, detail, status }, contentType: 'application/problem+json' };
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Python/Go style booleans: true/t/1/yes and false/f/0/no, any case; undefined otherwise. */
export function parseBool(v: string | null | undefined): boolean | undefined {
  if (v === null || v === undefined) return undefined;
  const s = v.trim().toLowerCase();
  if (['true', 't', '1', 'yes'].includes(s)) return true;
  if (['false', 'f', '0', 'no'].includes(s)) return false;
  return undefined;
}

/** Repeated and comma-separated query values, flattened. */
export function multi(q: URLSearchParams, key: string): string[] {
  return q
    .getAll(key)
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}
