/**
 * Session templates (reference §1.1-1.2): the stored record, the input draft, PATCH's deep merge and
 * PUT's validation. Stored boot sets keep BOS's snake_case JSON (sessions' setup reads them as BOS
 * does); drafts are the camelCase GraphQL inputs, where null means "clear this optional field".
 */
import { z } from 'zod';
import { canonicalXname, isXname, looksLikeNid } from './xname.ts';
import { deployDraft, deployRecord, deploySchema, type DeployDraft, type DeployRecord } from './deploy.ts';
import { checkRolloutPolicy, type RolloutPolicy } from './rollout-policy.ts';
import { fail, joinField, nameSchema, ok, text, zodIssues, type Checked, type Issue } from './validation.ts';

export type Arch = 'X86' | 'ARM' | 'Other' | 'Unknown';
export const ARCHES: readonly Arch[] = ['X86', 'ARM', 'Other', 'Unknown'];

export interface CfsRecord {
  configuration: string;
}

/** One boot set as stored in session_templates.boot_sets (keyed by name), BOS's JSON. */
export interface BootSetRecord {
  path: string;
  type: string;
  etag?: string;
  kernel_parameters?: string;
  node_list?: string[];
  node_roles_groups?: string[];
  node_groups?: string[];
  arch: Arch;
  rootfs_provider?: string;
  rootfs_provider_passthrough?: string;
  cfs?: CfsRecord;
  /** bootorch: write an image to the node's disk and boot from it (domain/deploy.ts). */
  deploy?: DeployRecord;
  /** bootorch: the image manifest a RESCUE session boots these nodes into (docs/rescue.md). */
  rescue_image?: string;
}

/** A stored boot set's fields, in BOS's spelling: the one list the REST door and the CLI's template files read. */
export const BOOT_SET_FIELDS = [
  'name',
  'path',
  'type',
  'etag',
  'kernel_parameters',
  'node_list',
  'node_roles_groups',
  'node_groups',
  'arch',
  'rootfs_provider',
  'rootfs_provider_passthrough',
  'cfs',
  'deploy',
  'rescue_image',
] as const;

export interface TemplateRecord {
  name: string;
  /** null: untenanted. */
  tenant: string | null;
  description: string | null;
  enableCfs: boolean;
  cfs: CfsRecord | null;
  bootSets: Record<string, BootSetRecord>;
  rollout: RolloutPolicy | null;
}

type Maybe<T> = T | null | undefined;
export interface CfsDraft {
  configuration?: Maybe<string>;
}
export interface BootSetDraft {
  name: string;
  path?: Maybe<string>;
  type?: Maybe<string>;
  etag?: Maybe<string>;
  kernelParameters?: Maybe<string>;
  nodeList?: Maybe<string[]>;
  nodeRolesGroups?: Maybe<string[]>;
  nodeGroups?: Maybe<string[]>;
  arch?: Maybe<Arch>;
  rootfsProvider?: Maybe<string>;
  rootfsProviderPassthrough?: Maybe<string>;
  cfs?: Maybe<CfsDraft>;
  deploy?: Maybe<DeployDraft>;
  rescueImage?: Maybe<string>;
}
export interface TemplateDraft {
  description?: Maybe<string>;
  enableCfs?: Maybe<boolean>;
  cfs?: Maybe<CfsDraft>;
  bootSets: BootSetDraft[];
  rollout?: Maybe<Record<string, unknown>>;
}
export type TemplatePatch = Omit<TemplateDraft, 'bootSets'> & { bootSets?: Maybe<BootSetDraft[]> };

export interface TemplateRules {
  /** Option reject_nids: NID-like node names are errors, not warnings. */
  rejectNids: boolean;
}

const cfsSchema = z.object({ configuration: text(0, 127).nullish() }).nullish();
const list = (max: number) =>
  z.array(text(1, 127)).min(1, 'must have at least 1 entry (or be left out)').max(max, `must have at most ${max} entries`).nullish();

const bootSetSchema = z.object({
  name: nameSchema,
  path: text(1, 4095),
  type: text(1, 127),
  etag: text(0, 65536).nullish(),
  kernelParameters: text(0, 4096).nullish(),
  nodeList: list(65535),
  nodeRolesGroups: list(1023),
  nodeGroups: list(4095),
  arch: z.enum(ARCHES as [Arch, ...Arch[]]).nullish(),
  rootfsProvider: text(1, 511).nullish(),
  rootfsProviderPassthrough: text(0, 4096).nullish(),
  cfs: cfsSchema,
  deploy: deploySchema,
  rescueImage: text(1, 4095).nullish(),
});

const templateSchema = z.object({
  description: text(1, 1023).nullish(),
  enableCfs: z.boolean().nullish(),
  cfs: cfsSchema,
  bootSets: z.array(bootSetSchema).min(1, 'must have at least 1 boot set').max(127, 'must have at most 127 boot sets'),
});

/** BOS PUT validation: returns the record to store (without name/tenant) and the warnings. */
export function validateTemplate(draft: TemplateDraft, rules: TemplateRules): Checked<Omit<TemplateRecord, 'name' | 'tenant'>> {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  // Boot sets are addressed by name in field paths once the name itself is usable.
  const label = (i: number) => {
    const n = draft.bootSets[i]?.name;
    return typeof n === 'string' && nameSchema.safeParse(n).success ? `bootSets.${n}` : `bootSets[${i}]`;
  };
  const rename = (path: PropertyKey[]): PropertyKey[] =>
    path[0] === 'bootSets' && typeof path[1] === 'number' && path.length > 2 ? [label(path[1]), ...path.slice(2)] : path;
  const parsed = templateSchema.safeParse(draft);
  if (!parsed.success) errors.push(...zodIssues(parsed.error, '', rename));

  const seen = new Set<string>();
  draft.bootSets.forEach((b, i) => {
    if (seen.has(b.name)) errors.push({ field: `bootSets[${i}].name`, message: `boot set "${b.name}" is given twice` });
    seen.add(b.name);
  });

  const bootSets: Record<string, BootSetRecord> = {};
  draft.bootSets.forEach((b, i) => {
    const at = label(i);
    if (!hasHardware(b)) {
      errors.push({ field: at, message: 'must have at least one of nodeList, nodeRolesGroups or nodeGroups' });
    }
    const nodes = checkNodeList(b.nodeList ?? [], `${at}.nodeList`, rules);
    errors.push(...nodes.errors);
    warnings.push(...nodes.warnings);
    bootSets[b.name] = toRecord(b, nodes.canonical);
  });

  const rollout = checkRolloutPolicy(draft.rollout ?? null);
  if (!rollout.ok) errors.push(...rollout.errors);
  if (errors.length) return fail(dedupe(errors), warnings);
  const cfs = draft.cfs?.configuration ? { configuration: draft.cfs.configuration } : null;
  return ok(
    {
      description: draft.description ?? null,
      enableCfs: draft.enableCfs ?? true,
      cfs,
      bootSets,
      rollout: rollout.ok ? rollout.value : null,
    },
    warnings,
  );
}

function hasHardware(b: BootSetDraft): boolean {
  return [b.nodeList, b.nodeRolesGroups, b.nodeGroups].some((l) => Array.isArray(l) && l.length > 0);
}

/** NID-like names warn (or fail with reject_nids); the rest must be xnames, stored canonical. */
export function checkNodeList(nodes: readonly string[], field: string, rules: TemplateRules) {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const canonical = nodes.map((raw, i) => {
    if (looksLikeNid(raw)) {
      const issue = { field: `${field}[${i}]`, message: `"${raw.slice(0, 64)}" looks like a NID; node lists take xnames` };
      (rules.rejectNids ? errors : warnings).push(issue);
      return raw.trim();
    }
    const id = canonicalXname(raw);
    if (!isXname(id)) errors.push({ field: `${field}[${i}]`, message: `"${raw.slice(0, 64)}" is not a valid xname (e.g. x3000c0s19b1n0)` });
    return id;
  });
  return { canonical, errors, warnings };
}

function toRecord(b: BootSetDraft, nodeList: string[]): BootSetRecord {
  const r: BootSetRecord = { path: b.path ?? '', type: b.type ?? '', arch: b.arch ?? 'X86' };
  if (b.etag != null) r.etag = b.etag;
  if (b.kernelParameters != null) r.kernel_parameters = b.kernelParameters;
  if (b.nodeList != null) r.node_list = nodeList;
  if (b.nodeRolesGroups != null) r.node_roles_groups = [...b.nodeRolesGroups];
  if (b.nodeGroups != null) r.node_groups = [...b.nodeGroups];
  if (b.rootfsProvider != null) r.rootfs_provider = b.rootfsProvider;
  if (b.rootfsProviderPassthrough != null) r.rootfs_provider_passthrough = b.rootfsProviderPassthrough;
  if (b.cfs?.configuration) r.cfs = { configuration: b.cfs.configuration };
  if (b.deploy) r.deploy = deployRecord(b.deploy);
  if (b.rescueImage != null) r.rescue_image = b.rescueImage;
  return r;
}

function dedupe(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.field}\u0000${i.message}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

/** The stored record as a draft, so PATCH can merge into it and re-validate it like a PUT. */
export function recordToDraft(r: TemplateRecord): TemplateDraft {
  return {
    description: r.description,
    enableCfs: r.enableCfs,
    cfs: r.cfs ? { ...r.cfs } : null,
    rollout: r.rollout ? { ...r.rollout } : null,
    bootSets: Object.entries(r.bootSets).map(([name, b]) => ({
      name,
      path: b.path,
      type: b.type,
      etag: b.etag,
      kernelParameters: b.kernel_parameters,
      nodeList: b.node_list,
      nodeRolesGroups: b.node_roles_groups,
      nodeGroups: b.node_groups,
      arch: b.arch,
      rootfsProvider: b.rootfs_provider,
      rootfsProviderPassthrough: b.rootfs_provider_passthrough,
      cfs: b.cfs ? { ...b.cfs } : null,
      deploy: b.deploy ? deployDraft(b.deploy) : null,
      rescueImage: b.rescue_image,
    })),
  };
}

/**
 * BOS PATCH deep merge: cfs dict-merged; boot sets merged per name, each field by field with its cfs
 * dict-merged; a new name is added; none is removed. undefined keeps a field, null clears it.
 */
export function mergeTemplatePatch(current: TemplateDraft, patch: TemplatePatch): TemplateDraft {
  const out: TemplateDraft = { ...current, bootSets: current.bootSets.map((b) => ({ ...b })) };
  if (patch.description !== undefined) out.description = patch.description;
  if (patch.enableCfs != null) out.enableCfs = patch.enableCfs;
  if (patch.cfs !== undefined) out.cfs = mergeDict(current.cfs, patch.cfs);
  if (patch.rollout !== undefined) out.rollout = mergeDict(current.rollout, patch.rollout);
  for (const p of patch.bootSets ?? []) {
    const i = out.bootSets.findIndex((b) => b.name === p.name);
    if (i < 0) {
      out.bootSets.push({ ...p });
      continue;
    }
    // Found by name: the patch's name is the boot set's own.
    const base = out.bootSets[i]!;
    const merged: BootSetDraft = { ...base, ...definedFields(p) };
    if (p.cfs !== undefined) merged.cfs = mergeDict(base.cfs, p.cfs);
    out.bootSets[i] = merged;
  }
  return out;
}

/** The fields of `o` that are not undefined (in a patch, undefined keeps a field). */
function definedFields<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** Dict merge where null clears the whole dict and a null value clears one key. */
function mergeDict<T extends object>(base: Maybe<T>, patch: Maybe<T>): T | null {
  if (patch === null) return null;
  const out: Record<string, unknown> = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === undefined) continue;
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out as T;
}

export type SessionOperationName = 'boot' | 'reboot' | 'shutdown' | 'rescue' | 'unrescue';

/** The operations that boot the boot set's own image (a rescue boots its rescue image, an unrescue what the nodes already have). */
export const bootsTemplateImage = (operation: SessionOperationName): boolean => operation === 'boot' || operation === 'reboot';

/** The rescue image of a boot set: its own rescue_image, else the option default_rescue_image ('' when neither). */
export const rescueImageOf = (b: Pick<BootSetRecord, 'rescue_image'>, defaultRescueImage: string): string =>
  b.rescue_image || defaultRescueImage;

/**
 * The static part of BOS's validate_boot_sets (run by createSession and validateSessionTemplate):
 * boot sets present, hardware named, NID check, supported rootfs provider and boot set type; for a
 * rescue, a rescue image for every boot set. Reading the image manifests is the async part
 * (api/template-checks.ts).
 */
export function checkBootSets(
  r: Pick<TemplateRecord, 'bootSets'>,
  operation: SessionOperationName,
  rules: TemplateRules & { defaultRescueImage?: string },
) {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const entries = Object.entries(r.bootSets);
  if (entries.length === 0) errors.push({ field: 'bootSets', message: 'the template has no boot sets' });
  for (const [name, b] of entries) {
    const at = `bootSets.${name}`;
    if (![b.node_list, b.node_roles_groups, b.node_groups].some((l) => Array.isArray(l) && l.length > 0)) {
      errors.push({ field: at, message: 'names no nodes: needs at least one of nodeList, nodeRolesGroups or nodeGroups' });
    }
    (b.node_list ?? []).forEach((n, i) => {
      if (!looksLikeNid(n)) return;
      const issue = { field: `${at}.nodeList[${i}]`, message: `"${n.slice(0, 64)}" looks like a NID; node lists take xnames` };
      (rules.rejectNids ? errors : warnings).push(issue);
    });
    if (b.rootfs_provider !== undefined && b.rootfs_provider !== 'sbps') {
      warnings.push({
        field: joinField(at, 'rootfsProvider'),
        message: `rootfs provider "${b.rootfs_provider}" is not supported (only sbps); a session with it fails at setup`,
      });
    }
    if (bootsTemplateImage(operation) && b.type !== 's3') {
      errors.push({ field: joinField(at, 'type'), message: `boot set type "${b.type}" is not supported (only s3)` });
    }
    if (operation === 'rescue' && !rescueImageOf(b, rules.defaultRescueImage ?? '')) {
      errors.push({
        field: joinField(at, 'rescueImage'),
        message: "no rescue image: set the boot set's rescueImage or the option default_rescue_image",
      });
    }
  }
  return { errors, warnings };
}

/** BOS's sessiontemplatetemplate: a static example to start from. */
export const EXAMPLE_TEMPLATE: TemplateRecord = {
  name: 'name-your-template',
  tenant: null,
  description: 'Template for booting compute nodes',
  enableCfs: true,
  cfs: { configuration: 'desired-cfs-config' },
  bootSets: {
    'name-your-boot-set': {
      path: 's3://boot-images/<ims-image-id>/manifest.json',
      etag: 'your-boot-image-etag',
      type: 's3',
      kernel_parameters:
        'console=ttyS0,115200 bad_page=panic crashkernel=360M hugepagelist=2m-2g intel_iommu=off iommu.passthrough=on numa_interleave_omit=headless oops=panic pageblock_order=14 rd.neednet=1 rd.retry=10 rd.shell split_lock_detect=off systemd.unified_cgroup_hierarchy=1 ip=nmn0:dhcp quiet spire_join_token=${SPIRE_JOIN_TOKEN}',
      node_list: ['x3000c0s19b1n0', 'x3000c0s19b2n0'],
      arch: 'X86',
      rootfs_provider: 'sbps',
      rootfs_provider_passthrough: 'sbps:v1:iqn.2023-06.csm.iscsi:_sbps-hsn._tcp.my-system.my-site-domain:300',
    },
  },
  rollout: null,
};
