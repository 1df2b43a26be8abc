/** /, /v2, /v2/version, /v2/healthz and /v2/options. */
import type { HealthState, Options, OptionsPatchInput } from '../api/generated/types.ts';
import { object } from './body.ts';
import { camel, convertKeys, snake } from './names.ts';
import { ok, type Route } from './route.ts';

interface VersionInfo {
  major: number;
  minor: number;
  patch: number;
}

/** BOS's Version: the parts as strings, with links to itself and the versions document. */
const version = (v: VersionInfo, self: string) => ({
  major: String(v.major),
  minor: String(v.minor),
  patch: String(v.patch),
  links: [
    { href: self, rel: 'self' },
    { href: '/', rel: 'versions' },
  ],
});

export const systemRoutes: Route[] = [
  { method: 'get', path: '/', handler: async ({ call }) => ok([version(await call('version'), '/v2')]) },
  { method: 'get', path: '/v2', handler: async ({ call }) => ok(version(await call('version'), '/v2')) },
  { method: 'get', path: '/v2/version', handler: async ({ call }) => ok(version(await call('version'), '/v2/version')) },
  {
    // Always 200, as BOS's: the body says what is down.
    method: 'get',
    path: '/v2/healthz',
    handler: async ({ call }) => {
      const h = await call('health');
      return ok({ dbStatus: h.database, apiStatus: h.api });
    },
  },
  { method: 'get', path: '/v2/options', handler: async ({ call }) => ok(convertKeys(await call('options'), snake)) },
  {
    method: 'patch',
    path: '/v2/options',
    handler: async ({ call, body }) =>
      // The options' names and types are the resolver's to check (zod, errors naming the option).
      ok(convertKeys(await call('patchOptions', { patch: convertKeys(object(body), camel) as OptionsPatchInput }), snake)),
  },
];
