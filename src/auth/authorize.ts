/**
 * Who may call what. One table, keyed by GraphQL root field name, read by `authorize`.
 *
 * Key by the root field (`info.fieldName` of a Query/Mutation/Subscription resolver), never by the
 * request's `operationName`: the client picks that name, so it can say anything.
 * A field missing from the table is admin-only (fail closed): a new mutation nobody classified
 * cannot be called by operators or viewers by accident. Add it here in the same change that adds
 * it to the SDL.
 */
import { canonicalXname } from '../domain/xname.ts';
import { isAuthFailure, roleAtLeast, type AuthFailure, type Principal } from './principal.ts';
import type { NodeScope } from './node-scopes.ts';

export interface OperationPolicy {
  kind: 'query' | 'mutation' | 'subscription';
  /** Lowest human role allowed; `public` needs no credential at all. */
  min: 'public' | 'viewer' | 'operator' | 'admin';
  /**
   * Only untenanted principals (default false). For system-wide state a tenant must not touch:
   * options (BOS's OPA blocks /options for tenant admins), tokens, tenants, and component PUTs,
   * which BOS does not tenant-check.
   */
  systemOnly?: boolean;
  /**
   * Whether a `node` principal may call it (default: never). `self` always; `{ xnameArg }` only
   * when that argument (a dot path into the args, e.g. `input.xname`) is the node's own xname, and,
   * for a credential minted from a boot ticket, only when its scope is in `scopes` (node-scopes.ts).
   */
  node?: 'self' | { xnameArg: string; scopes?: readonly NodeScope[] };
}

const q = (min: OperationPolicy['min'], more: Partial<OperationPolicy> = {}): OperationPolicy => ({ kind: 'query', min, ...more });
const m = (min: OperationPolicy['min'], more: Partial<OperationPolicy> = {}): OperationPolicy => ({ kind: 'mutation', min, ...more });
const s = (min: OperationPolicy['min']): OperationPolicy => ({ kind: 'subscription', min });

/** The policy table. Extend it here; unknown fields are admin-only. */
export const POLICY: Readonly<Record<string, OperationPolicy>> = Object.freeze({
  // Liveness and identity.
  version: q('public'),
  health: q('public'), // probes carry no credential
  whoami: q('viewer', { node: 'self' }), // lets a reporter check its credential without side effects

  // Reads: viewer and up (schema/*.graphql).
  sessionTemplates: q('viewer'),
  sessionTemplate: q('viewer'),
  sessionTemplateExample: q('viewer'),
  validateSessionTemplate: q('viewer'),
  sessions: q('viewer'),
  session: q('viewer'),
  sessionStatus: q('viewer'),
  components: q('viewer'),
  component: q('viewer'),
  machineMap: q('viewer'), // the console's map: what components shows, in columns
  options: q('viewer'),
  // Beyond BOS (schema/beyond.graphql): dry run, explain, timeline.
  planSession: q('viewer'),
  explain: q('viewer'),
  explainSession: q('viewer'),
  componentTimeline: q('viewer'),
  // Node consoles (schema/consoles.graphql): the resolver also refuses viewers unless console_viewers is on, and tenants.
  nodeConsole: q('viewer', { systemOnly: true }),

  // Templates, sessions, components: operator and up.
  putSessionTemplate: m('operator'),
  patchSessionTemplate: m('operator'),
  deleteSessionTemplate: m('operator'),
  createSession: m('operator'),
  deleteSession: m('operator'),
  deleteSessions: m('operator'),
  patchComponent: m('operator'),
  patchComponents: m('operator'),
  deleteComponent: m('operator'),
  applyStaged: m('operator'),
  putComponent: m('operator', { systemOnly: true }),
  putComponents: m('operator', { systemOnly: true }),
  // Rollout controls (schema/sessions.graphql).
  pauseSession: m('operator'),
  resumeSession: m('operator'),
  abortSession: m('operator'),
  // A large session's second admin (schema/approval.graphql): the resolver refuses the session's creator.
  approveSession: m('admin'),
  // Quarantine (schema/quarantine.graphql): an operator, as for clearing a node's failure (patchComponents).
  releaseQuarantine: m('operator'),

  // The node reporter, `reportBootState(id, bssToken)`: the node itself for its own xname, or a human operator.
  reportBootState: m('operator', { node: { xnameArg: 'id', scopes: ['report'] } }),
  // The deploy agent and the installed system (schema/deploy.graphql): the node itself, or an operator.
  // Which states each scope may send is the heartbeat's own rule (engine/deploy-heartbeat.ts).
  deployHeartbeat: m('operator', { node: { xnameArg: 'id', scopes: ['deploy', 'disk'] } }),

  // System administration: untenanted admins only.
  patchOptions: m('admin', { systemOnly: true }),
  // Token and tenant administration (schema/auth.graphql).
  apiTokens: q('admin', { systemOnly: true }),
  createApiToken: m('admin', { systemOnly: true }),
  createNodeToken: m('admin', { systemOnly: true }),
  revokeApiToken: m('admin', { systemOnly: true }),
  tenants: q('admin', { systemOnly: true }),
  setTenantXnames: m('admin', { systemOnly: true }),
  deleteTenant: m('admin', { systemOnly: true }),

  // Standalone node inventory (schema/nodes.graphql): BMC credentials, so admins write; viewers read.
  nodes: q('viewer', { systemOnly: true }),
  registerNodes: m('admin', { systemOnly: true }),
  deleteNode: m('admin', { systemOnly: true }),
  discoverNodes: m('admin', { systemOnly: true }),
  inspectNodes: m('admin', { systemOnly: true }),

  // Live feeds (schema/live.graphql): viewer and up, filtered to the caller's tenant by the feed.
  componentEvents: s('viewer'),
  componentEventBatches: s('viewer'),
  sessionProgress: s('viewer'),
});

/** What a field not in the table gets. */
export const UNKNOWN_OPERATION_POLICY: OperationPolicy = { kind: 'mutation', min: 'admin', systemOnly: true };

export type AuthzCode = 'UNAUTHENTICATED' | 'FORBIDDEN';
export type AuthzResult = { ok: true } | { ok: false; code: AuthzCode; reason: string };

/**
 * May this caller run this root field? `principal` is what the authenticator returned (or nothing),
 * so a failed authentication still reaches public fields and explains itself on the others.
 * Pass `policy` to check against an extended table.
 */
export function authorize(
  principal: Principal | AuthFailure | null | undefined,
  field: string,
  args?: Record<string, unknown>,
  policy: Readonly<Record<string, OperationPolicy>> = POLICY,
): AuthzResult {
  const p = Object.hasOwn(policy, field) ? policy[field]! : UNKNOWN_OPERATION_POLICY;
  if (p.min === 'public') return { ok: true };
  if (!principal) return { ok: false, code: 'UNAUTHENTICATED', reason: 'no credential (Authorization: Bearer <token>)' };
  if (isAuthFailure(principal)) return { ok: false, code: 'UNAUTHENTICATED', reason: principal.message };

  if (principal.role === 'node') {
    if (!p.node) return deny(`node credentials may not call ${field}`);
    if (p.node === 'self') return { ok: true };
    const arg = argAt(args, p.node.xnameArg);
    if (typeof arg !== 'string') return deny(`${field} needs argument ${p.node.xnameArg}`);
    if (principal.scope && !p.node.scopes?.includes(principal.scope))
      return deny(`a node credential for ${principal.scope} may not call ${field}`);
    return nodeMayReport(principal, arg);
  }
  if (!roleAtLeast(principal.role, p.min)) return deny(`${field} needs role ${p.min} or higher; caller is ${principal.role}`);
  if (p.systemOnly && principal.tenant !== null) {
    return deny(`${field} is system-wide; a credential for tenant ${principal.tenant} may not call it`);
  }
  return { ok: true };
}

function deny(reason: string): AuthzResult {
  return { ok: false, code: 'FORBIDDEN', reason };
}

function argAt(args: Record<string, unknown> | undefined, path: string): unknown {
  let v: unknown = args;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Node credentials report only for their own xname; humans with operator or admin for any. */
export function nodeMayReport(principal: Principal, xname: string): AuthzResult {
  if (principal.role === 'node') {
    if (!principal.node) return deny('node credential carries no xname');
    if (canonicalXname(principal.node) === canonicalXname(xname)) return { ok: true };
    return deny(`node credential for ${principal.node} may not report for ${xname.slice(0, 64)}`);
  }
  if (roleAtLeast(principal.role, 'operator')) return { ok: true };
  return deny(`reporting boot state needs role operator or a node credential; caller is ${principal.role}`);
}

/** Thrown by the assert helpers; src/auth/errors.ts turns it into a GraphQLError. */
export class AuthzError extends Error {
  constructor(
    readonly code: AuthzCode,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'AuthzError';
  }
}

/** Throws AuthzError unless `principal` may report boot state for `xname`. */
export function assertNodeMayReport(principal: Principal, xname: string): void {
  const r = nodeMayReport(principal, xname);
  if (!r.ok) throw new AuthzError(r.code, r.reason);
}

/**
 * The tenant a request acts for, from the credential and the `Cray-Tenant-Name` header (reference
 * §2.1). An untenanted credential may name any tenant (or none: every tenant, BOS's admin context);
 * a tenant credential is pinned to its tenant, with or without the header, and a different header
 * is refused (what OPA enforces in front of BOS).
 */
export function resolveTenant(
  principal: Principal,
  header: string | undefined | null,
): { ok: true; tenant: string | null } | { ok: false; code: 'FORBIDDEN'; reason: string } {
  const asked = header?.trim() || null;
  if (principal.tenant === null) return { ok: true, tenant: asked };
  if (asked === null || asked === principal.tenant) return { ok: true, tenant: principal.tenant };
  return { ok: false, code: 'FORBIDDEN', reason: `credential is for tenant ${principal.tenant}, not ${asked.slice(0, 64)}` };
}
