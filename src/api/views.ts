/**
 * Db rows and domain records in the shapes of the GraphQL types. Some types resolve lazily and
 * so have parent types of their own (codegen mappers): a component page counts its total only when
 * asked, a session computes its extended status only when asked, and an accepted report reads its
 * component only when asked.
 */
import { configDriveView, deployDraft, type DeployRecord } from '../domain/deploy.ts';
import { sealedBytes } from '../adapters/standalone/secrets.ts';
import type { ComponentRow, SessionRow } from '../db/schema.ts';
import type { ComponentOrder, ComponentQuery, PageStart } from '../db/components/read.ts';
import type { StoredTemplate } from '../db/templates.ts';
import type { TemplateRecord } from '../domain/templates.ts';
import type { Options as DomainOptions } from '../domain/options.ts';
import { parseStoredRollout } from '../domain/rollout-policy.ts';
import type { Issue } from '../domain/validation.ts';
import type {
  BootStateReported,
  Component,
  ComponentStatus,
  DiskDeploy,
  Options,
  Session,
  SessionExtendedStatus,
  SessionOperation,
  SessionState,
  SessionTemplate,
  ValidationMessage,
} from './generated/types.ts';

export function componentView(r: ComponentRow): Component {
  return {
    id: r.id,
    enabled: r.enabled,
    status: {
      phase: r.phase as Component['status']['phase'],
      status: r.status as ComponentStatus,
      statusOverride: r.statusOverride as Component['status']['statusOverride'],
    },
    actualState: {
      bootArtifacts: { kernel: r.actualKernel, kernelParameters: r.actualKernelParameters, initrd: r.actualInitrd },
      bssToken: r.actualBssToken,
      lastUpdated: r.actualUpdatedAt,
    },
    desiredState: {
      bootArtifacts: { kernel: r.desiredKernel, kernelParameters: r.desiredKernelParameters, initrd: r.desiredInitrd },
      configuration: r.desiredConfiguration,
      bssToken: r.desiredBssToken,
      lastUpdated: r.desiredUpdatedAt,
    },
    stagedState: {
      bootArtifacts: { kernel: r.stagedKernel, kernelParameters: r.stagedKernelParameters, initrd: r.stagedInitrd },
      configuration: r.stagedConfiguration,
      session: r.stagedSession,
      lastUpdated: r.stagedUpdatedAt,
    },
    rescue: r.rescueKernel ? { kernel: r.rescueKernel, kernelParameters: r.rescueKernelParameters, initrd: r.rescueInitrd } : null,
    lastAction: { action: r.lastAction, failed: r.lastActionFailed, lastUpdated: r.lastActionAt },
    eventStats: {
      powerOnAttempts: r.powerOnAttempts,
      powerOffGracefulAttempts: r.powerOffGracefulAttempts,
      powerOffForcefulAttempts: r.powerOffForcefulAttempts,
    },
    error: r.error,
    failureReason: r.failureReason,
    session: r.session,
    sessionTenant: r.sessionTenant || null,
    retryPolicy: r.retryPolicy,
    powerDrift: r.powerDrift ? { ...r.powerDrift, since: new Date(r.powerDrift.since) } : null,
    updatedAt: r.updatedAt,
  };
}

/** Parent of ComponentConnection: one page, plus the query to count on demand and its order for the cursor. */
export interface ComponentConnectionParent {
  rows: ComponentRow[];
  hasNextPage: boolean;
  query: ComponentQuery;
  /** Absent: sorted by id. */
  order?: { by: ComponentOrder; descending: boolean; lastKey: string | null };
}

/** Opaque page cursors: the last id, base64url-encoded. */
export const encodeCursor = (id: string) => Buffer.from(`c:${id}`).toString('base64url');
export function decodeCursor(cursor: string): string | null {
  const s = Buffer.from(cursor, 'base64url').toString('utf8');
  return s.startsWith('c:') && s.length > 2 ? s.slice(2) : null;
}

/** A cursor of another order than ascending id: the order, the last row's sort key and id. */
export const encodeOrderedCursor = (by: ComponentOrder, descending: boolean, start: PageStart) =>
  Buffer.from(`o:${JSON.stringify([by, descending, start.key, start.id])}`).toString('base64url');
export function decodeOrderedCursor(cursor: string, by: ComponentOrder, descending: boolean): PageStart | null {
  const s = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!s.startsWith('o:')) return null;
  try {
    const v = JSON.parse(s.slice(2)) as unknown;
    if (!Array.isArray(v) || v.length !== 4 || v[0] !== by || v[1] !== descending) return null;
    return typeof v[2] === 'string' && typeof v[3] === 'string' ? { key: v[2], id: v[3] } : null;
  } catch {
    return null;
  }
}

export function templateView(t: TemplateRecord & Partial<Pick<StoredTemplate, 'createdAt' | 'updatedAt'>>): SessionTemplate {
  const epoch = new Date(0);
  return {
    name: t.name,
    tenant: t.tenant,
    description: t.description,
    enableCfs: t.enableCfs,
    cfs: t.cfs,
    rollout: t.rollout,
    createdAt: t.createdAt ?? epoch,
    updatedAt: t.updatedAt ?? epoch,
    // jsonb keeps keys in its own order (by length), so show boot sets by name, predictably.
    bootSets: Object.entries(t.bootSets)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, b]) => ({
        name,
        path: b.path,
        type: b.type,
        etag: b.etag ?? null,
        kernelParameters: b.kernel_parameters ?? null,
        nodeList: b.node_list ?? null,
        nodeRolesGroups: b.node_roles_groups ?? null,
        nodeGroups: b.node_groups ?? null,
        arch: b.arch ?? 'X86',
        rootfsProvider: b.rootfs_provider ?? null,
        rootfsProviderPassthrough: b.rootfs_provider_passthrough ?? null,
        cfs: b.cfs ?? null,
        deploy: b.deploy ? deployView(b.deploy) : null,
        rescueImage: b.rescue_image ?? null,
      })),
  };
}

/** A boot set's deploy as readers see it: the config drive's user data as a flag and a length only. */
function deployView(d: DeployRecord): DiskDeploy {
  const { image, rootDeviceHints } = deployDraft(d);
  return {
    image: { ...image, format: image.format ?? 'raw' },
    rootDeviceHints: rootDeviceHints ?? null,
    configDrive: d.config_drive ? configDriveView(d.config_drive, sealedBytes) : null,
  };
}

/** Parent of Session: everything but the extended status, plus the key to compute it. */
export type SessionParent = Omit<Session, 'extendedStatus' | 'result' | 'resultText'> & { tenantKey: string };

/**
 * An accepted report: the component is read only when asked for (its own resolver), so the reporter's
 * document, which asks for `__typename` alone, costs no row read or mapping per report.
 */
export type BootStateReportedParent = Omit<BootStateReported, 'component'> & { componentId: string };

/** sessionStatus without its jobs, result, blocked and retrying nodes, which their own resolvers read only when asked for. */
export type SessionStatusParent = Omit<SessionExtendedStatus, 'jobs' | 'result' | 'blocked' | 'retrying'>;

export function sessionView(r: SessionRow): SessionParent {
  return {
    tenantKey: r.tenantKey,
    name: r.name,
    tenant: r.tenant,
    operation: r.operation as SessionOperation,
    templateName: r.templateName,
    limit: r.limit,
    stage: r.stage,
    includeDisabled: r.includeDisabled,
    components: r.components ? r.components.split(',') : [],
    status: { status: r.status as SessionState, startTime: r.startTime, endTime: r.endTime, error: r.error },
    rollout: parseStoredRollout(r.rollout),
    paused: r.paused,
    pauseReason: r.pauseReason,
    aborted: r.aborted,
    createdBy: r.createdBy,
  };
}

const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
export const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `a_b_c` -> `aBC`, as `camel` spells it. */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
/** The options under their GraphQL names (optionsView's result, checked against the SDL's Options). */
type CamelOptions = { [K in keyof DomainOptions & string as Camel<K>]: DomainOptions[K] };

export function optionsView(o: DomainOptions): Options {
  const view = Object.fromEntries(Object.entries(o).map(([k, v]) => [camel(k), v])) as CamelOptions;
  return view;
}

export const messages = (issues: Issue[]): ValidationMessage[] => issues.map((i) => ({ field: i.field || null, message: i.message }));
