/**
 * Component writes as BOS makes them (reference §1.4, §2 "Server-side auto fields", §2 409 rule):
 * a nested patch (V2Component) is completed with the auto fields, then deep-merged into the current
 * columns. Pure: the caller reads the rows and the token's artifacts first, and writes the result.
 */
import type { DecisionInput } from './status-decision.ts';
import { z } from 'zod';
import { parseComponentId } from './xname.ts';
import { fail, NAME_RE, ok, text, zodIssues, type Checked, type Issue } from './validation.ts';

/** Columns a component write sets: all but the generated status, the rollout queue and updated_at. */
/** A component's stored fields, but for what the database derives (status) or keeps for itself. */
export interface ComponentFields extends Omit<DecisionInput, 'status'> {
  id: string;
  enabled: boolean;
  statusOverride: string;
  desiredBssToken: string;
  desiredUpdatedAt: Date | null;
  actualBssToken: string;
  actualUpdatedAt: Date | null;
  stagedKernel: string;
  stagedKernelParameters: string;
  stagedInitrd: string;
  stagedConfiguration: string;
  stagedSession: string;
  stagedUpdatedAt: Date | null;
  powerOnAttempts: number;
  powerOffGracefulAttempts: number;
  powerOffForcefulAttempts: number;
  session: string;
  sessionTenant: string;
  retryPolicy: number | null;
}

export interface Artifacts {
  kernel: string;
  kernelParameters: string;
  initrd: string;
}
type ArtifactsPatch = Partial<Artifacts>;

/** A V2Component body: every field optional; nested objects merge key by key. */
export interface ComponentPatch {
  enabled?: boolean;
  actualState?: { bootArtifacts?: ArtifactsPatch; bssToken?: string };
  desiredState?: { bootArtifacts?: ArtifactsPatch; configuration?: string; bssToken?: string };
  stagedState?: { bootArtifacts?: ArtifactsPatch; configuration?: string; session?: string };
  lastAction?: { action?: string; failed?: boolean };
  eventStats?: { powerOnAttempts?: number; powerOffGracefulAttempts?: number; powerOffForcefulAttempts?: number };
  status?: { phase?: string; statusOverride?: string };
  error?: string;
  session?: string;
  /** null clears it (falls back to the default). */
  retryPolicy?: number | null;
}

export interface WriteContext {
  now: Date;
  /** The caller's tenant ('' for none): the session_tenant of a session the write names. */
  tenantKey: string;
  /** The artifacts bootorch set with this BSS token, if it knows the token. */
  artifactsForToken(token: string): Artifacts | undefined;
}

export const ACTIONS = [
  'actual_state_cleanup',
  'apply_staged',
  'newly_discovered',
  'powering_off_forcefully',
  'powering_off_gracefully',
  'powering_on',
  'session_setup',
  'switching_to_disk',
] as const;

export function blankComponent(id: string): ComponentFields {
  return {
    id,
    enabled: false,
    phase: '',
    statusOverride: '',
    lastAction: '',
    lastActionFailed: false,
    lastActionAt: null,
    desiredKernel: '',
    desiredKernelParameters: '',
    desiredInitrd: '',
    desiredConfiguration: '',
    desiredBssToken: '',
    desiredUpdatedAt: null,
    actualKernel: '',
    actualKernelParameters: '',
    actualInitrd: '',
    actualBssToken: '',
    actualUpdatedAt: null,
    stagedKernel: '',
    stagedKernelParameters: '',
    stagedInitrd: '',
    stagedConfiguration: '',
    stagedSession: '',
    stagedUpdatedAt: null,
    powerOnAttempts: 0,
    powerOffGracefulAttempts: 0,
    powerOffForcefulAttempts: 0,
    error: '',
    failureReason: '',
    powerUnknownSince: null,
    session: '',
    sessionTenant: '',
    retryPolicy: null,
  };
}

/** BOS's `_set_auto_fields`, steps 1 and 3-5, on the body (step 2, the timestamps, is in applyComponentWrite). */
export function withAutoFields(body: ComponentPatch, ctx: Pick<WriteContext, 'artifactsForToken'>): ComponentPatch {
  const p: ComponentPatch = { ...body };
  const token = p.actualState?.bssToken;
  if (token) {
    const known = ctx.artifactsForToken(token);
    if (known) p.actualState = { ...p.actualState, bootArtifacts: { ...known } };
  }
  if (p.enabled === true) p.status = { ...p.status, statusOverride: 'on_hold' };
  if (p.desiredState && p.session === undefined) p.session = '';
  if (p.desiredState && (p.desiredState.bootArtifacts !== undefined || p.desiredState.configuration !== undefined)) {
    p.eventStats = { powerOnAttempts: 0, powerOffGracefulAttempts: 0, powerOffForcefulAttempts: 0 };
  }
  return p;
}

/** Merge a body (auto fields applied here) into the current columns; returns the new columns. */
export function applyComponentWrite(current: ComponentFields, body: ComponentPatch, ctx: WriteContext): ComponentFields {
  const p = withAutoFields(body, ctx);
  const n: ComponentFields = { ...current };
  const set = <K extends keyof ComponentFields>(k: K, v: ComponentFields[K] | undefined) => {
    if (v !== undefined) n[k] = v;
  };
  set('enabled', p.enabled);
  if (p.actualState) {
    const a = p.actualState;
    set('actualKernel', a.bootArtifacts?.kernel);
    set('actualKernelParameters', a.bootArtifacts?.kernelParameters);
    set('actualInitrd', a.bootArtifacts?.initrd);
    set('actualBssToken', a.bssToken);
    // A report whose token bootorch does not know leaves the state to age out (reference §5).
    if (!onlyToken(a)) n.actualUpdatedAt = ctx.now;
  }
  if (p.desiredState) {
    const d = p.desiredState;
    set('desiredKernel', d.bootArtifacts?.kernel);
    set('desiredKernelParameters', d.bootArtifacts?.kernelParameters);
    set('desiredInitrd', d.bootArtifacts?.initrd);
    set('desiredConfiguration', d.configuration);
    set('desiredBssToken', d.bssToken);
    if (!onlyToken(d)) n.desiredUpdatedAt = ctx.now;
  }
  if (p.stagedState) {
    const s = p.stagedState;
    set('stagedKernel', s.bootArtifacts?.kernel);
    set('stagedKernelParameters', s.bootArtifacts?.kernelParameters);
    set('stagedInitrd', s.bootArtifacts?.initrd);
    set('stagedConfiguration', s.configuration);
    set('stagedSession', s.session);
    n.stagedUpdatedAt = ctx.now;
  }
  if (p.lastAction) {
    set('lastAction', p.lastAction.action);
    set('lastActionFailed', p.lastAction.failed);
    n.lastActionAt = ctx.now;
  }
  if (p.eventStats) {
    set('powerOnAttempts', p.eventStats.powerOnAttempts);
    set('powerOffGracefulAttempts', p.eventStats.powerOffGracefulAttempts);
    set('powerOffForcefulAttempts', p.eventStats.powerOffForcefulAttempts);
  }
  set('phase', p.status?.phase);
  set('statusOverride', p.status?.statusOverride);
  set('error', p.error);
  if (p.session !== undefined) {
    n.session = p.session;
    n.sessionTenant = p.session === '' ? '' : ctx.tenantKey;
  }
  if (p.retryPolicy !== undefined) n.retryPolicy = p.retryPolicy;
  // Enabling starts the component over, so an old failure's reason no longer describes it.
  if (p.enabled === true) {
    n.failureReason = '';
    n.powerUnknownSince = null;
  }
  return n;
}

function onlyToken(o: object): boolean {
  const keys = Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
  return keys.length === 1 && keys[0] === 'bssToken';
}

/**
 * BOS's 409 (`_validate_actual_state_change_is_allowed`): while bootorch is mid-transition on an
 * enabled component, only a power-on may be followed by a report; anything else must wait.
 */
export function refusesActualStateWrite(c: { enabled: boolean; status: string; lastAction: string }): boolean {
  return c.enabled && c.status !== 'stable' && c.lastAction !== 'powering_on';
}

/** Names of the columns that differ. */
export function changedFields(a: ComponentFields, b: ComponentFields): (keyof ComponentFields)[] {
  return (Object.keys(b) as (keyof ComponentFields)[]).filter((k) => {
    const x = a[k];
    const y = b[k];
    if (x instanceof Date || y instanceof Date) return (x as Date | null)?.getTime() !== (y as Date | null)?.getTime();
    return x !== y;
  });
}

const STATE_COLUMN = /^(desired|actual)(Kernel|KernelParameters|Initrd|Configuration)$/;

/** The status operator has work when a write enables a component or changes what it should or does boot. */
export function needsStatusKick(body: ComponentPatch, changed: readonly (keyof ComponentFields)[]): boolean {
  return body.enabled === true || changed.some((k) => STATE_COLUMN.test(k));
}

// ---- the edge: GraphQL input -> ComponentPatch ----

const count = z.number().int('must be a whole number').min(0, 'must be at least 0').max(1_048_576, 'must be at most 1048576');
const sessionName = z.string().refine((v) => v === '' || NAME_RE.test(v), 'must be empty or a session name');
const artifacts = z
  .object({ kernel: text(0, 4095), kernelParameters: text(0, 4096), initrd: text(0, 4095) })
  .partial()
  .strict();
const patchSchema = z
  .object({
    enabled: z.boolean(),
    actualState: z
      .object({ bootArtifacts: artifacts, bssToken: text(0, 65535) })
      .partial()
      .strict(),
    desiredState: z
      .object({ bootArtifacts: artifacts, configuration: text(0, 127), bssToken: text(0, 65535) })
      .partial()
      .strict(),
    stagedState: z
      .object({ bootArtifacts: artifacts, configuration: text(0, 127), session: sessionName })
      .partial()
      .strict(),
    lastAction: z
      .object({
        action: z.enum(ACTIONS, { error: `must be one of ${ACTIONS.join(', ')}` }),
        failed: z.boolean(),
      })
      .partial()
      .strict(),
    eventStats: z.object({ powerOnAttempts: count, powerOffGracefulAttempts: count, powerOffForcefulAttempts: count }).partial().strict(),
    status: z
      .object({
        phase: z.enum(['', 'powering_on', 'powering_off', 'configuring']),
        statusOverride: z.enum(['', 'on_hold', 'failed', 'queued']),
      })
      .partial()
      .strict(),
    error: text(0, 65536),
    session: sessionName,
    retryPolicy: count.nullable(),
  })
  .partial()
  .strict();

/** GraphQL input (nulls = not given, except retryPolicy) -> a checked patch. */
export function checkComponentInput(input: Record<string, unknown>, prefix = ''): Checked<ComponentPatch> {
  const { retryPolicy, ...rest } = input;
  const cleaned = stripNulls(rest) as Record<string, unknown>;
  if (retryPolicy !== undefined) cleaned.retryPolicy = retryPolicy;
  const r = patchSchema.safeParse(cleaned);
  return r.success ? ok(r.data as ComponentPatch) : fail(zodIssues(r.error, prefix));
}

function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null && x !== undefined)
        .map(([k, x]) => [k, stripNulls(x)]),
    );
  }
  return v;
}

/** A canonical id (lowercase, no leading zeros) or the issue with it. */
export function checkComponentId(raw: string, field = 'id'): Checked<string> {
  const p = parseComponentId(raw);
  return 'error' in p ? fail([{ field, message: p.error }]) : ok(p.id);
}

/** Canonical, de-duplicated ids, or an issue per bad one (`field[i]`). */
export function checkComponentIds(raw: readonly string[], field: string, max = 32768): Checked<string[]> {
  if (raw.length > max) return fail([{ field, message: `must have at most ${max} ids` }]);
  const errors: Issue[] = [];
  const ids = raw.map((r, i) => {
    const p = parseComponentId(r);
    if ('error' in p) errors.push({ field: `${field}[${i}]`, message: p.error });
    return 'error' in p ? '' : p.id;
  });
  return errors.length ? fail(errors) : ok([...new Set(ids)]);
}
