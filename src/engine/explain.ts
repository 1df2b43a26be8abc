/**
 * Explain (Beyond BOS): where a component stands and what it waits for, in words and in data. The
 * operator criteria are the operators' own selection objects evaluated for this node
 * (engine/selection.ts), and the status decision is the real decision table fed with live PCS and
 * CFS answers, so explain cannot drift from what the engine does.
 */
import type pg from 'pg';
import type { Adapters, ConfigComponent, PowerState } from '../adapters/ports.ts';
import type { Options } from '../domain/options.ts';
import { decide } from '../domain/status-decision.ts';
import { selectComponents, type EngineComponent } from '../db/engine/components.ts';
import { loadOptions } from '../db/engine/options.ts';
import { sessionInfo, type SessionInfo } from '../db/engine/sessions.ts';
import { ALL_OPERATORS } from '../operators/index.ts';
import { retryLimitHit, errorText, type AttemptCounter, type EngineContext } from './operator.ts';
import { effectiveWaits, evaluateSelection } from './selection.ts';
import { classifyWait, type WaitKind } from './waits.ts';

export interface ExplainCriterion { operator: string; criterion: string; met: boolean; detail: string }
export interface Blocker { kind: string; detail: string }

export interface Explanation {
  id: string;
  summary: string;
  waitingFor: WaitKind;
  nextOperator: string | null;
  phase: string;
  status: string;
  enabled: boolean;
  session: SessionInfo | null;
  power: PowerState | null;
  cfs: ConfigComponent | null;
  decision: { rule: string; phase: string; why: string } | null;
  criteria: ExplainCriterion[];
  blockers: Blocker[];
  lastEvents: Array<Record<string, unknown>>;
}

export async function explainComponent(pool: pg.Pool, adapters: Adapters, id: string, now = new Date()): Promise<Explanation | null> {
  const [c] = await selectComponents(pool, { ids: [id] });
  if (!c) return null;
  const options = await loadOptions(pool);
  const session = c.session ? await sessionInfo(pool, c.sessionTenant, c.session) : null;
  const blockers: Blocker[] = [];
  const probe = async <T>(what: string, f: () => Promise<T>): Promise<T | null> => {
    try { return await f(); } catch (e) { blockers.push({ kind: 'service_unreachable', detail: `${what}: ${errorText(e)}` }); return null; }
  };
  const power = (await probe('PCS', () => adapters.power.powerStatus([id])))?.get(id) ?? null;
  const cfs = (await probe('CFS', () => adapters.config.getComponents([id])))?.[0] ?? null;
  const known = await probe('HSM', () => adapters.inventory.queryNodes([id]));
  const locked = await probe('HSM locks', () => adapters.inventory.lockedNodes());
  if (known && known.length === 0) blockers.push({ kind: 'not_in_inventory', detail: 'HSM does not know this node' });
  if (locked?.includes(id)) blockers.push({ kind: 'locked', detail: 'the node is locked in HSM (new sessions leave it out)' });
  if (!c.enabled) blockers.push({ kind: 'disabled', detail: c.status === 'failed' ? `failed: ${c.error || c.failureReason}` : 'not enabled: no operator acts on it' });
  if (c.session && !session) blockers.push({ kind: 'session_deleted', detail: `owning session ${c.session} no longer exists` });
  if (session?.paused) blockers.push({ kind: 'session_paused', detail: `session ${c.session} is paused: ${session.pauseReason ?? ''}` });
  if (session?.aborted) blockers.push({ kind: 'session_aborted', detail: `session ${c.session} was aborted` });
  for (const counter of ['power_on_attempts', 'power_off_graceful_attempts', 'power_off_forceful_attempts'] as AttemptCounter[]) {
    if (c.enabled && retryLimitHit(c, counter, options)) {
      blockers.push({ kind: 'retry_limit', detail: `${counter} reached the retry policy (${c.retryPolicy ?? options.default_retry_policy})` });
    }
  }
  if (cfs && !cfs.enabled && c.phase === 'configuring') {
    blockers.push({ kind: 'cfs_disabled', detail: 'CFS component disabled: waiting for the node\'s cfs-state-reporter to re-enable it after boot' });
  }
  const waits = effectiveWaits(c, options);
  const decision = power && cfs !== null ? decide(c, power, cfs, waits, now) : null;
  const ctx = { options, now: () => now } as unknown as EngineContext;
  const criteria: ExplainCriterion[] = [];
  let nextOperator: string | null = null;
  for (const op of ALL_OPERATORS) {
    if (!op.action) continue;
    const list = evaluateSelection(c, op.action.selection(ctx), { sessionHeld: !!(session?.paused || session?.aborted), now });
    if (op.action.ready) list.push(op.action.ready(ctx, c));
    criteria.push(...list.map((x) => ({ operator: op.name, ...x })));
    if (!nextOperator && list.every((x) => x.met)) nextOperator = op.name;
  }
  if (!nextOperator && c.enabled && c.status !== 'queued') nextOperator = c.status === 'configuring' ? 'configuration' : 'status';
  const wait = classifyWait(c, options, now, session);
  const r = await pool.query(`select id::text as cursor, at, component_id, kind, actor, from_phase, to_phase, from_status, to_status, action,
    error, reason, session from component_events where component_id = $1 order by id desc limit 10`, [id]);
  return {
    id, summary: wait.description, waitingFor: wait.kind, nextOperator, phase: c.phase, status: c.status, enabled: c.enabled,
    session, power, cfs, decision: decision ? { rule: decision.rule, phase: decision.phase, why: decision.why } : null,
    criteria, blockers, lastEvents: r.rows.reverse(),
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
export async function explainSession(pool: pg.Pool, tenantKey: string, name: string, now = new Date()): Promise<SessionExplanation | null> {
  const session = await sessionInfo(pool, tenantKey, name);
  if (!session) return null;
  const options: Options = await loadOptions(pool);
  const rows: EngineComponent[] = await selectComponents(pool, { enabled: true, session: { tenantKey, name } });
  const groups = new Map<string, { waitingFor: WaitKind; description: string; count: number; examples: string[] }>();
  for (const c of rows) {
    const w = classifyWait(c, options, now, session);
    const g = groups.get(w.kind) ?? { waitingFor: w.kind, description: w.group, count: 0, examples: [] };
    g.count++;
    if (g.examples.length < 5) g.examples.push(c.id);
    groups.set(w.kind, g);
  }
  return {
    name, status: session.status, paused: session.paused, pauseReason: session.pauseReason, remaining: rows.length,
    groups: [...groups.values()].sort((a, b) => b.count - a.count),
  };
}
