/**
 * Explain (Beyond BOS): where a component stands and what it waits for, in words and in data. The
 * operator criteria are the operators' own selection objects evaluated for this node
 * (engine/selection.ts), and the status decision is the real decision table fed with live PCS and
 * CFS answers, so explain cannot drift from what the engine does.
 */
import type { Adapters, ConfigComponent, PowerState } from '../adapters/ports.ts';
import type { Options } from '../domain/options.ts';
import { decideWithDeploy } from '../domain/deploy-decision.ts';
import { deployOf } from '../db/deploys.ts';
import type { Db } from '../db/client.ts';
import type { EventRow, SessionRow } from '../db/schema.ts';
import { ATTEMPT_COUNTERS, selectComponents, type AttemptCounter, type EngineComponent } from '../db/components/select.ts';
import { getOptions } from '../db/options.ts';
import { getSession } from '../db/sessions/rows.ts';
import { recentEvents } from '../db/events.ts';
import { createOperators } from '../operators/index.ts';
import { retryLimitHit } from '../engine/action-operator.ts';
import { errorText } from '../engine/outcome.ts';
import { databaseClock } from '../engine/clock.ts';
import { effectiveWaits, evaluateSelection } from '../engine/selection.ts';
import { classifyWait, type WaitKind } from './waits.ts';
import { nextStep, type NextStep } from './next-step.ts';
import { blockingService } from '../domain/blocked.ts';
import { outageSince } from '../db/components/blocked.ts';
import { existingComponents } from '../db/components/read.ts';
import { quarantineOf, quarantineWords, type Quarantine } from '../domain/quarantine.ts';

export interface ExplainCriterion {
  operator: string;
  criterion: string;
  met: boolean;
  detail: string;
}
export interface Blocker {
  kind: string;
  detail: string;
}

export interface Explanation {
  id: string;
  summary: string;
  waitingFor: WaitKind;
  nextOperator: string | null;
  /** What happens next and what to do (api/next-step.ts). */
  next: NextStep;
  phase: string;
  status: string;
  enabled: boolean;
  session: SessionRow | null;
  power: PowerState | null;
  cfs: ConfigComponent | null;
  decision: { rule: string; phase: string; why: string } | null;
  criteria: ExplainCriterion[];
  blockers: Blocker[];
  lastEvents: EventRow[];
  /** Set while new sessions leave it out unless their limit names it. */
  quarantine: Quarantine | null;
}

/** The node's quarantine now under the options' threshold (domain/quarantine.ts), or null. */
export async function quarantineNow(db: Db, id: string, options: Pick<Options, 'quarantine_after_failed_sessions'>) {
  const k = options.quarantine_after_failed_sessions;
  if (k <= 0) return null;
  const run = (await existingComponents(db, [id])).get(id);
  return run ? quarantineOf(run, k) : null;
}

/** Waits are measured on the engine's clock (the database's), as the operators measure them. */
export async function explainComponent(db: Db, adapters: Adapters, id: string): Promise<Explanation | null> {
  const [c] = await selectComponents(db, { ids: [id] });
  if (!c) return null;
  const options = await getOptions(db);
  const now = (await databaseClock(db))();
  const session = c.session ? await getSession(db, c.sessionTenant, c.session) : null;
  const blockers: Blocker[] = [];
  const probe = async <T>(what: string, f: () => Promise<T>): Promise<T | null> => {
    try {
      return await f();
    } catch (e) {
      blockers.push({ kind: 'service_unreachable', detail: `${what}: ${errorText(e)}` });
      return null;
    }
  };
  const power = (await probe('PCS', () => adapters.power.powerStatus([id])))?.get(id) ?? null;
  const cfs = (await probe('CFS', () => adapters.config.getComponents([id])))?.[0] ?? null;
  const known = await probe('HSM', () => adapters.inventory.queryNodes([id]));
  const locked = await probe('HSM locks', () => adapters.inventory.lockedNodes());
  if (known && known.length === 0) blockers.push({ kind: 'not_in_inventory', detail: 'HSM does not know this node' });
  if (locked?.includes(id)) blockers.push({ kind: 'locked', detail: 'the node is locked in HSM (new sessions leave it out)' });
  if (!c.enabled)
    blockers.push({
      kind: 'disabled',
      detail: c.status === 'failed' ? `failed: ${c.error || c.failureReason}` : 'not enabled: no operator acts on it',
    });
  const quarantine = await quarantineNow(db, id, options);
  if (quarantine) blockers.push({ kind: 'quarantined', detail: quarantineWords(id, quarantine) });
  if (c.session && !session) blockers.push({ kind: 'session_deleted', detail: `owning session ${c.session} no longer exists` });
  if (session?.paused) blockers.push({ kind: 'session_paused', detail: `session ${c.session} is paused: ${session.pauseReason ?? ''}` });
  if (session?.aborted) blockers.push({ kind: 'session_aborted', detail: `session ${c.session} was aborted` });
  for (const counter of Object.keys(ATTEMPT_COUNTERS) as AttemptCounter[]) {
    if (c.enabled && retryLimitHit(c, counter, options)) {
      blockers.push({
        kind: 'retry_limit',
        detail: `${counter} reached the retry policy (${c.retryPolicy ?? options.default_retry_policy})`,
      });
    }
  }
  if (power?.state === 'unknown') {
    const timeout = effectiveWaits(c, options).powerUnknownTimeout;
    const since = c.powerUnknownSince ? ` since ${c.powerUnknownSince.toISOString()}` : '';
    blockers.push({
      kind: 'power_unknown',
      detail: `power unknown${since} (${power.cause}): ${power.error}; no power action while it is, failed with the cause after ${timeout} s`,
    });
  }
  if (cfs && !cfs.enabled && c.phase === 'configuring') {
    blockers.push({
      kind: 'cfs_disabled',
      detail: "CFS component disabled: waiting for the node's cfs-state-reporter to re-enable it after boot",
    });
  }
  const service = blockingService(c);
  const outage = service && c.failureReason === 'service_unavailable' ? { service, since: await outageSince(db, [id], service) } : null;
  if (outage) blockers.push({ kind: 'outside_service', detail: `${service} is failing: ${c.error}` });
  const waits = effectiveWaits(c, options);
  const deploy = await deployOf(db, id);
  // A BMC still being asked gives no conclusion (the status pass decides nothing for it either), and
  // the status pass never looks at a disabled node (done or failed): no decision to show for it.
  const decision =
    c.enabled && power && !(power.state === 'unknown' && power.pending) && cfs !== null
      ? decideWithDeploy(c, deploy, power, cfs, { ...waits, deployHeartbeatTimeout: options.deploy_heartbeat_timeout }, now)
      : null;
  const ctx = { options, now: () => now };
  const criteria: ExplainCriterion[] = [];
  let nextOperator: string | null = null;
  for (const op of createOperators()) {
    if (!op.action) continue;
    const list = evaluateSelection(c, op.action.selection(ctx), {
      sessionHeld: !!(session?.paused || session?.aborted),
      sessionState: session?.status ?? null,
      now,
    });
    if (op.action.ready) list.push(op.action.ready(ctx, c));
    criteria.push(...list.map((x) => ({ operator: op.name, ...x })));
    if (!nextOperator && list.every((x) => x.met)) nextOperator = op.name;
  }
  if (!nextOperator && c.enabled && c.status !== 'queued') nextOperator = c.status === 'configuring' ? 'configuration' : 'status';
  const wait = classifyWait(c, options, now, session, outage?.since);
  return {
    id,
    summary: wait.description,
    waitingFor: wait.kind,
    nextOperator,
    next: nextStep({ c, wait, session, options, now, outage }),
    phase: c.phase,
    status: c.status,
    enabled: c.enabled,
    session,
    power,
    cfs,
    decision: decision ? { rule: decision.rule, phase: decision.phase, why: decision.why } : null,
    criteria,
    blockers,
    lastEvents: await recentEvents(db, id, 10),
    quarantine,
  };
}

export interface SessionExplanation {
  name: string;
  status: string;
  paused: boolean;
  pauseReason: string | null;
  remaining: number;
  groups: Array<{ waitingFor: WaitKind; description: string; count: number; examples: string[] }>;
}

/** Why a session is not complete: its remaining nodes grouped by what they wait for. */
export async function explainSession(db: Db, tenantKey: string, name: string): Promise<SessionExplanation | null> {
  const session = await getSession(db, tenantKey, name);
  if (!session) return null;
  const options: Options = await getOptions(db);
  const now = (await databaseClock(db))();
  const rows: EngineComponent[] = await selectComponents(db, { enabled: true, session: { tenantKey, name } });
  const groups = new Map<string, { waitingFor: WaitKind; description: string; count: number; examples: string[] }>();
  for (const c of rows) {
    const w = classifyWait(c, options, now, session);
    // By kind and words: nodes blocked by PCS and by HSM, or held for different BMC causes, are groups of their own.
    const key = `${w.kind}|${w.group}`;
    const g = groups.get(key) ?? { waitingFor: w.kind, description: w.group, count: 0, examples: [] };
    g.count++;
    if (g.examples.length < 5) g.examples.push(c.id);
    groups.set(key, g);
  }
  return {
    name,
    status: session.status,
    paused: session.paused,
    pauseReason: session.pauseReason,
    remaining: rows.length,
    groups: [...groups.values()].sort((a, b) => b.count - a.count),
  };
}
