/**
 * /v2/sessiontemplates, /v2/sessiontemplatesvalid, /v2/sessiontemplatetemplate: BOS's JSON (boot sets
 * as a map keyed by name, snake_case) to the GraphQL inputs (boot sets as a list, camelCase) and back.
 */
import type { BootSet, DiskDeploy, SessionTemplate, TemplateValidation, SessionTemplateInput } from '../api/generated/types.ts';
import { enumValues } from '../api/enums.ts';
import { booleans, defined, isObject, object, oneOf, onlyKeys, type Json } from './body.ts';
import { bosField, bosWords, camel } from './names.ts';
import { Problem } from './problem.ts';
import { BOOT_SET_FIELDS } from '../domain/templates.ts';
import { deployInput } from '../domain/deploy.ts';
import { getOne, noContent, ok, type Route } from './route.ts';

// One list with the CLI's template files (domain/templates.ts).

const LISTS = ['node_list', 'node_roles_groups', 'node_groups'];
/** Read-only fields a client may send back as it got them (GET, edit, PUT); they are not input. */
const READ_ONLY = ['name', 'tenant', 'links'];

function cfsInput(v: unknown, at: string) {
  if (v === undefined || v === null) return v;
  const o = object(v, at);
  onlyKeys(o, ['configuration'], at);
  return { configuration: o.configuration };
}

function bootSetInput(key: string, v: unknown) {
  const at = `boot_sets.${key}`;
  const b = object(v, at);
  onlyKeys(b, BOOT_SET_FIELDS, at);
  if (b.name !== undefined && b.name !== key)
    throw new Problem(400, `${at}.name: must be the boot set's key ("${key.slice(0, 127)}") when given`);
  for (const l of LISTS) {
    const list = b[l];
    if (list !== undefined && list !== null && !(Array.isArray(list) && list.every((x) => typeof x === 'string'))) {
      throw new Problem(400, `${at}.${l}: must be a list of strings`);
    }
  }
  if (b.arch !== undefined && b.arch !== null) oneOf(b.arch, Object.values(enumValues.Arch), `${at}.arch`);
  const draft: Json = { name: key };
  for (const f of BOOT_SET_FIELDS) if (f !== 'name' && f !== 'cfs' && f !== 'deploy' && b[f] !== undefined) draft[camel(f)] = b[f];
  if (b.cfs !== undefined) draft.cfs = cfsInput(b.cfs, `${at}.cfs`);
  if (b.deploy !== undefined) draft.deploy = deployInput(b.deploy) as Json;
  return draft;
}

/** A V2SessionTemplate (PUT) or V2SessionTemplatePatch (PATCH) body as the GraphQL input. */
function templateInput(body: unknown, o: { patch: boolean; name: string }): Json {
  const t = object(body);
  onlyKeys(t, ['description', 'enable_cfs', 'cfs', 'boot_sets', ...(o.patch ? [] : READ_ONLY)]);
  if (!o.patch && t.name !== undefined && t.name !== o.name)
    throw new Problem(400, `name: must be the template's name in the path ("${o.name.slice(0, 127)}") when given`);
  booleans(t, ['enable_cfs']);
  const input: Json = {};
  if (t.description !== undefined) input.description = t.description;
  if (t.enable_cfs !== undefined) input.enableCfs = t.enable_cfs;
  if (t.cfs !== undefined) input.cfs = cfsInput(t.cfs, 'cfs');
  if (t.boot_sets === undefined && o.patch) return input;
  if (!isObject(t.boot_sets)) throw new Problem(400, 'boot_sets: is required: an object of boot sets keyed by name');
  input.bootSets = Object.entries(t.boot_sets).map(([k, v]) => bootSetInput(k, v));
  return input;
}

function bootSetToBos(b: BootSet): Json {
  return defined({
    path: b.path,
    type: b.type,
    etag: b.etag,
    kernel_parameters: b.kernelParameters,
    node_list: b.nodeList,
    node_roles_groups: b.nodeRolesGroups,
    node_groups: b.nodeGroups,
    arch: b.arch,
    rootfs_provider: b.rootfsProvider,
    rootfs_provider_passthrough: b.rootfsProviderPassthrough,
    cfs: b.cfs ?? undefined,
    deploy: b.deploy ? deployToBos(b.deploy) : undefined,
    rescue_image: b.rescueImage ?? undefined,
  });
}

/** A deploy in BOS's spelling; the config drive's user data as `has_user_data` and `user_data_bytes` only. */
function deployToBos(d: DiskDeploy): Json {
  const h = d.rootDeviceHints;
  const cd = d.configDrive;
  return defined({
    image: { ...d.image },
    root_device_hints: h && Object.keys(defined({ ...h })).length ? defined({ ...h }) : undefined,
    config_drive: cd ? { has_user_data: cd.hasUserData, user_data_bytes: cd.userDataBytes, meta_data: cd.metaData } : undefined,
  });
}

/** A template as BOS answers it: V2SessionTemplate, `tenant` null when untenanted, unset fields left out. */
export function templateToBos(t: SessionTemplate): Json {
  return {
    name: t.name,
    tenant: t.tenant ?? null,
    ...defined({ description: t.description, cfs: t.cfs ?? undefined }),
    enable_cfs: t.enableCfs,
    boot_sets: Object.fromEntries(t.bootSets.map((b) => [b.name, bootSetToBos(b)])),
  };
}

/** BOS's validation answer: one JSON string, "Valid", or the errors (else the warnings) joined by "; ". */
function validationText(v: TemplateValidation): string {
  const join = (l: TemplateValidation['errors']) =>
    l.map((m) => (m.field ? `${bosField(m.field)}: ${bosWords(m.message)}` : bosWords(m.message))).join('; ');
  if (!v.valid) return join(v.errors);
  return v.warnings.length ? join(v.warnings) : 'Valid';
}

export const templateRoutes: Route[] = [
  {
    method: 'get',
    path: '/v2/sessiontemplates',
    handler: async ({ call }) => ok((await call('sessionTemplates')).map(templateToBos)),
  },
  getOne('/v2/sessiontemplates/:name', 'sessionTemplate', 'name', 'session template', templateToBos),
  {
    method: 'put',
    path: '/v2/sessiontemplates/:name',
    handler: async ({ call, params, body }) => {
      const input = templateInput(body, { patch: false, name: params.name! });
      // A put's input always has its boot sets (templateInput refuses one without); the rest the resolver checks.
      const r = await call('putSessionTemplate', { name: params.name!, input: input as SessionTemplateInput });
      return ok(templateToBos(r.template));
    },
  },
  {
    method: 'patch',
    path: '/v2/sessiontemplates/:name',
    handler: async ({ call, params, body }) => {
      const patch = templateInput(body, { patch: true, name: params.name! });
      const r = await call('patchSessionTemplate', { name: params.name, patch });
      return ok(templateToBos(r.template));
    },
  },
  {
    method: 'delete',
    path: '/v2/sessiontemplates/:name',
    handler: async ({ call, params }) => {
      await call('deleteSessionTemplate', { name: params.name });
      return noContent;
    },
  },
  {
    method: 'get',
    path: '/v2/sessiontemplatesvalid/:name',
    handler: async ({ call, params }) => ok(validationText(await call('validateSessionTemplate', { name: params.name }))),
  },
  {
    method: 'get',
    path: '/v2/sessiontemplatetemplate',
    handler: async ({ call }) => ok(templateToBos(await call('sessionTemplateExample'))),
  },
];
