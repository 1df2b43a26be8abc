/**
 * Session setup as a plan: which nodes a session manages, what each should boot, and why every other
 * candidate node is left out (BOS session_setup.py, reference §4.6). The session-setup operator
 * applies this plan; planSession returns it without writing, so the two cannot disagree.
 */
import type { DeployRecord } from '../domain/deploy.ts';
import type { Adapters, InventoryNode } from '../adapters/ports.ts';
import type { Options } from '../domain/options.ts';
import { applyLimit, namedNodes, type LimitInventory } from '../domain/limit.ts';
import { quarantineOf, type FailureRun, type Quarantine } from '../domain/quarantine.ts';
import { canonicalXname } from '../domain/xname.ts';
import type { DesiredState, SessionOperation } from '../domain/sessions.ts';
import { bootsTemplateImage } from '../domain/templates.ts';

export type SkipReason =
  | 'excluded_by_limit'
  | 'locked'
  | 'another_tenant'
  | 'wrong_arch'
  | 'disabled_in_inventory'
  | 'not_in_inventory'
  | 'not_a_component'
  | 'quarantined'
  | 'rescued'
  | 'not_rescued';

export type { DesiredState };

export interface PlannedBootSet {
  name: string;
  nodes: string[];
  desired: DesiredState;
}

export interface SessionPlan {
  bootSets: PlannedBootSet[];
  /** node -> desired state (a node in two boot sets takes the later one, as BOS). */
  managed: Map<string, { bootSet: string; desired: DesiredState; deploy?: DeployRecord }>;
  skipped: Map<string, SkipReason>;
  /** The nodes left out as quarantined, with their quarantine (domain/quarantine.ts). */
  quarantined: Map<string, Quarantine>;
  warnings: string[];
  /** Set when setup must fail the session (BOS's reasons). */
  error: string | null;
}

export interface PlanSession {
  operation: SessionOperation;
  limit: string;
  includeDisabled: boolean;
  tenant: string | null;
}

export interface PlanTemplate {
  enableCfs: boolean;
  cfs: { configuration: string } | null;
  bootSets: Record<string, unknown>;
}

export interface PlanDeps {
  adapters: Adapters;
  options: Options;
  /** xnames the tenant owns (null: no tenant). */
  tenantXnames: ReadonlySet<string> | null;
  /** Which of these ids are bootorch components, each with its run of failed sessions (domain/quarantine.ts) and whether it is rescued. */
  existingComponents(ids: string[]): Promise<ReadonlyMap<string, FailureRun & { rescued: boolean }>>;
}

interface BootSetSpec {
  path: string;
  etag?: string;
  kernelParameters: string;
  nodeList: string[];
  nodeGroups: string[];
  nodeRolesGroups: string[];
  arch: string;
  rootfsProvider: string;
  rootfsProviderPassthrough: string;
  cfsConfiguration: string;
  /** A disk deploy (domain/deploy.ts); validated when the template was stored. */
  deploy?: DeployRecord;
  /** The image manifest a rescue boots these nodes into ('' when the boot set names none). */
  rescueImage: string;
}

/** Boot sets as stored: BOS snake_case or GraphQL camelCase field names are both accepted. */
export function readBootSet(raw: unknown): BootSetSpec {
  const b = (raw ?? {}) as Record<string, any>;
  const pick = (...keys: string[]) => keys.map((k) => b[k]).find((v) => v !== undefined && v !== null);
  const list = (...keys: string[]) => ((pick(...keys) as string[] | undefined) ?? []).map(String);
  return {
    path: String(pick('path') ?? ''),
    etag: pick('etag') as string | undefined,
    kernelParameters: String(pick('kernel_parameters', 'kernelParameters') ?? ''),
    nodeList: list('node_list', 'nodeList').map(canonicalXname),
    nodeGroups: list('node_groups', 'nodeGroups'),
    nodeRolesGroups: list('node_roles_groups', 'nodeRolesGroups'),
    arch: String(pick('arch') ?? 'X86').toUpperCase(),
    rootfsProvider: String(pick('rootfs_provider', 'rootfsProvider') ?? ''),
    rootfsProviderPassthrough: String(pick('rootfs_provider_passthrough', 'rootfsProviderPassthrough') ?? ''),
    cfsConfiguration: String((b.cfs as { configuration?: string } | undefined)?.configuration ?? ''),
    deploy: (b.deploy as DeployRecord | undefined) ?? undefined,
    rescueImage: String(pick('rescue_image', 'rescueImage') ?? ''),
  };
}

/** Lazily built inventory lookups shared by every boot set of a session (BOS's Inventory cache). */
class Inventory implements LimitInventory {
  private names = new Map<string, Set<string>>();
  private constructor(readonly nodes: Map<string, InventoryNode>) {}

  static async load(adapters: Adapters): Promise<Inventory> {
    const [nodes, groups, partitions] = await Promise.all([
      adapters.inventory.listNodes(),
      adapters.inventory.groups(),
      adapters.inventory.partitions(),
    ]);
    const inv = new Inventory(new Map(nodes.map((n) => [n.id, n])));
    const add = (name: string, id: string) => {
      const s = inv.names.get(name) ?? new Set<string>();
      s.add(id);
      inv.names.set(name, s);
    };
    for (const g of [...groups, ...partitions]) for (const id of g.members) add(g.label, canonicalXname(id));
    for (const n of nodes) {
      if (n.role) add(n.role, n.id);
      if (n.role && n.subRole) add(`${n.role}_${n.subRole}`, n.id);
    }
    return inv;
  }

  members(name: string): ReadonlySet<string> | undefined {
    return this.names.get(name);
  }
}

/** The inventory nodes a limit expression names, as session setup would resolve it over every node (the console's search by group). */
export async function limitMembers(adapters: Adapters, limit: string): Promise<Set<string>> {
  const inv = await Inventory.load(adapters);
  return applyLimit(new Set(inv.nodes.keys()), limit, inv);
}

const ARCH_OK: Record<string, string[]> = { X86: ['X86', 'UNKNOWN'], ARM: ['ARM'], OTHER: ['OTHER'], UNKNOWN: ['UNKNOWN'] };

export async function planSession(s: PlanSession, t: PlanTemplate, d: PlanDeps): Promise<SessionPlan> {
  const plan: SessionPlan = { bootSets: [], managed: new Map(), skipped: new Map(), quarantined: new Map(), warnings: [], error: null };
  const skip = (id: string, r: SkipReason) => {
    if (!plan.managed.has(id) && !plan.skipped.has(id)) plan.skipped.set(id, r);
  };
  const inv = await Inventory.load(d.adapters);
  const locked = new Set(await d.adapters.inventory.lockedNodes());
  for (const [name, raw] of Object.entries(t.bootSets)) {
    const bs = readBootSet(raw);
    if (s.tenant && d.tenantXnames) {
      const foreign = bs.nodeList.filter((x) => !d.tenantXnames!.has(x));
      if (foreign.length) {
        plan.error = `Boot set ${name} names nodes which do not exist or are not available to tenant ${s.tenant}: ${foreign.slice(0, 10).join(',')}`;
        return plan;
      }
    }
    let nodes = new Set(bs.nodeList);
    for (const g of bs.nodeGroups) {
      const m = inv.members(g);
      if (m) for (const x of m) nodes.add(x);
      else plan.warnings.push(`boot set ${name}: unknown group ${g}`);
    }
    for (const r of bs.nodeRolesGroups) {
      const m = inv.members(r);
      if (m) for (const x of m) nodes.add(x);
      else plan.warnings.push(`boot set ${name}: unknown role ${r}`);
    }
    const limited = applyLimit(nodes, s.limit, inv);
    for (const x of nodes) if (!limited.has(x)) skip(x, 'excluded_by_limit');
    nodes = limited;
    for (const x of [...nodes])
      if (locked.has(x)) {
        nodes.delete(x);
        skip(x, 'locked');
      }
    if (s.tenant && d.tenantXnames)
      for (const x of [...nodes])
        if (!d.tenantXnames.has(x)) {
          nodes.delete(x);
          skip(x, 'another_tenant');
        }
    if (nodes.size > 0) {
      const found = new Map((await d.adapters.inventory.queryNodes([...nodes])).map((n) => [n.id, n]));
      const ok = ARCH_OK[bs.arch] ?? [bs.arch];
      for (const x of [...nodes]) {
        const n = found.get(x);
        if (!n) {
          nodes.delete(x);
          skip(x, 'not_in_inventory');
          continue;
        }
        if (!ok.includes((n.arch || 'Unknown').toUpperCase())) {
          nodes.delete(x);
          skip(x, 'wrong_arch');
          continue;
        }
        if (!s.includeDisabled && !n.enabled) {
          nodes.delete(x);
          skip(x, 'disabled_in_inventory');
        }
      }
    }
    if (nodes.size === 0) continue;
    // createSession refuses it; the template or the option may have changed since.
    if (s.operation === 'rescue' && !(bs.rescueImage || d.options.default_rescue_image)) {
      plan.error = `Boot set ${name} has no rescue image: set its rescue_image or the option default_rescue_image`;
      return plan;
    }
    const desired = await desiredState(s, t, bs, d);
    const sorted = [...nodes].sort();
    plan.bootSets.push({ name, nodes: sorted, desired });
    for (const x of sorted) {
      plan.skipped.delete(x);
      plan.managed.set(x, { bootSet: name, desired, ...(bs.deploy && bootsTemplateImage(s.operation) ? { deploy: bs.deploy } : {}) });
    }
  }
  if (plan.managed.size === 0) {
    plan.error = 'No nodes were found to act upon.';
    return plan;
  }
  const existing = await d.existingComponents([...plan.managed.keys()]);
  for (const x of [...plan.managed.keys()])
    if (!existing.has(x)) {
      plan.managed.delete(x);
      plan.skipped.set(x, 'not_a_component');
    }
  const components = plan.managed.size;
  const rescue = leaveOutByRescue(plan, s.operation, existing);
  const afterRescue = plan.managed.size;
  leaveOutQuarantined(plan, s, inv, existing, d.options);
  for (const b of plan.bootSets) b.nodes = b.nodes.filter((x) => plan.managed.get(x)?.bootSet === b.name);
  if (components === 0) plan.error = 'All nodes found to act upon do not exist as BOS components';
  else if (afterRescue === 0) plan.error = rescue;
  else if (plan.managed.size === 0) plan.error = 'All nodes found to act upon are quarantined: name them in the limit, or release them';
  return plan;
}

/**
 * A rescued node is taken only by a rescue (again) or an unrescue, as Nova lets nothing else act on a
 * rescued server; an unrescue leaves out the nodes that are not rescued. Returns the setup error for
 * when every node is left out.
 */
function leaveOutByRescue(plan: SessionPlan, operation: SessionOperation, existing: ReadonlyMap<string, { rescued: boolean }>): string {
  if (operation === 'rescue') return '';
  const unrescue = operation === 'unrescue';
  for (const x of [...plan.managed.keys()]) {
    if (existing.get(x)!.rescued === unrescue) continue;
    plan.managed.delete(x);
    plan.skipped.set(x, unrescue ? 'not_rescued' : 'rescued');
  }
  return unrescue
    ? 'None of the nodes found to act upon is rescued'
    : `All nodes found to act upon are rescued: unrescue them first (a ${operation} does not take a rescued node)`;
}

/** Quarantined nodes (domain/quarantine.ts) are left out unless the limit names them one by one. */
function leaveOutQuarantined(
  plan: SessionPlan,
  s: PlanSession,
  inv: LimitInventory,
  runs: ReadonlyMap<string, FailureRun>,
  o: Pick<Options, 'quarantine_after_failed_sessions'>,
): void {
  const k = o.quarantine_after_failed_sessions;
  if (k <= 0) return;
  const named = namedNodes(s.limit, inv);
  for (const x of [...plan.managed.keys()]) {
    const q = quarantineOf(runs.get(x)!, k);
    if (!q || named.has(x)) continue;
    plan.managed.delete(x);
    plan.skipped.set(x, 'quarantined');
    plan.quarantined.set(x, q);
  }
}

async function desiredState(s: PlanSession, t: PlanTemplate, bs: BootSetSpec, d: PlanDeps): Promise<DesiredState> {
  if (s.operation === 'rescue') return rescueState(bs, d);
  // An unrescue writes no boot artifacts: the nodes go back to the desired state they kept.
  if (!bootsTemplateImage(s.operation)) return { kernel: '', kernelParameters: '', initrd: '', configuration: '' };
  const configuration = t.enableCfs ? bs.cfsConfiguration || t.cfs?.configuration || '' : '';
  const img = await d.adapters.images.resolve(bs.path, bs.etag);
  const params: string[] = [];
  if (img.bootParameters.trim()) params.push(img.bootParameters.trim());
  if (bs.kernelParameters.trim()) params.push(bs.kernelParameters.trim());
  if (bs.rootfsProvider === 'sbps') {
    if (!img.rootfs) throw new Error(`image ${bs.path} has no rootfs for rootfs_provider sbps`);
    const pass = bs.rootfsProviderPassthrough ? `:${bs.rootfsProviderPassthrough}` : '';
    params.push(`root=sbps-s3:${img.rootfs.path}:${img.rootfs.etag}${pass}`);
    params.push(`nmd_data=url=${img.rootfs.path},etag=${img.rootfs.etag}`);
  } else if (bs.rootfsProvider) {
    throw new Error(`rootfs_provider ${bs.rootfsProvider} is not supported (only sbps)`);
  } else if (bs.rootfsProviderPassthrough) {
    params.push(`root=::${bs.rootfsProviderPassthrough}`);
  }
  params.push(`bos_update_frequency=${d.options.component_actual_state_ttl}`);
  // The ramdisk runs the deploy agent instead of the reporter (src/api/boot/deploy-agent.sh).
  if (bs.deploy) params.push('bootorch_deploy=1');
  return { kernel: img.kernel, kernelParameters: params.join(' '), initrd: img.initrd, configuration };
}

/**
 * What a rescue boots: the rescue image (the boot set's, else the option default_rescue_image) with
 * its own boot parameters, no configuration, and `bootorch_rescue=1` so the image knows it is one;
 * its reporter reports it as any image's does.
 */
async function rescueState(bs: BootSetSpec, d: PlanDeps): Promise<DesiredState> {
  const img = await d.adapters.images.resolve(bs.rescueImage || d.options.default_rescue_image);
  const params = [img.bootParameters.trim(), `bos_update_frequency=${d.options.component_actual_state_ttl}`, 'bootorch_rescue=1'];
  return { kernel: img.kernel, kernelParameters: params.filter(Boolean).join(' '), initrd: img.initrd, configuration: '' };
}
