/**
 * The one path every API component write takes (put, patch, bulk patch, applyStaged):
 * lock the rows, apply BOS's auto fields and deep merge (domain/components.ts), upsert, and append one
 * event per component. Run it inside a transaction; the caller kicks `status` in it when `kickStatus` says so.
 */
import { getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { components, type ComponentRow } from '../schema.ts';
import { appendEvents, type NewEvent } from '../events.ts';
import { artifactsForTokens } from '../boot-artifacts.ts';
import {
  applyComponentWrite,
  blankComponent,
  changedFields,
  needsStatusKick,
  type ComponentFields,
  type ComponentPatch,
} from '../../domain/components.ts';
import { lockComponents, readComponents } from './read.ts';

export interface ComponentWrite {
  id: string;
  body: ComponentPatch;
  /** Who made this write, when it is not the call's actor (batched node reports). */
  actor?: string;
}

export interface WriteOptions {
  /** put: create or replace (a new record from the body); patch: merge into existing rows, skip missing ids. */
  mode: 'put' | 'patch';
  actor: string;
  /** The caller's tenant ('' for none); stamped as session_tenant when a body names a session. */
  tenantKey: string;
  /** Event kind for the timeline (default 'manual'), and what to record as its action / reason. */
  event?: { kind?: NewEvent['kind']; action?: string; reason?: string };
  now?: Date;
}

export interface WriteResult {
  /** The written rows, in the order of the writes (missing ones left out). */
  rows: ComponentRow[];
  /** Patch mode: ids that are not components (nothing written for them). */
  missing: string[];
  /** Some write enabled a component or changed its desired or actual state. */
  kickStatus: boolean;
  /** BSS tokens in the bodies that bootorch knows. */
  knownTokens: Set<string>;
}

export async function writeComponents(db: Db, writes: readonly ComponentWrite[], opts: WriteOptions): Promise<WriteResult> {
  const now = opts.now ?? new Date();
  const ids = [...new Set(writes.map((w) => w.id))];
  const current = new Map((await lockComponents(db, ids)).map((r) => [r.id, r]));
  const missing = opts.mode === 'patch' ? ids.filter((id) => !current.has(id)) : [];
  const tokens = writes.map((w) => w.body.actualState?.bssToken).filter((t): t is string => !!t);
  const known = await artifactsForTokens(db, tokens);
  const ctx = { now, tenantKey: opts.tenantKey, artifactsForToken: (t: string) => known.get(t) };

  const next = new Map<string, ComponentFields>();
  let kickStatus = false;
  const changes = new Map<string, string[]>();
  for (const w of writes) {
    const before = current.get(w.id);
    if (!before && opts.mode === 'patch') continue;
    // A put replaces the record (so a repeated id's last put wins); patches to one id accumulate.
    const base = opts.mode === 'put' ? blankComponent(w.id) : (next.get(w.id) ?? fields(before!));
    const after = applyComponentWrite(base, w.body, ctx);
    const changed = changedFields(before ? fields(before) : blankComponent(w.id), after);
    kickStatus ||= needsStatusKick(w.body, changed);
    changes.set(w.id, changed);
    next.set(w.id, after);
  }

  // One statement however many rows: the new records travel as one JSON array.
  if (next.size) {
    const records = [...next.values()].map((f) => toRecord(f, now));
    await db.execute(sql`insert into components (${sql.raw(COLUMNS)})
      select ${sql.raw(COLUMNS)} from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as v(${sql.raw(RECORD_TYPE)})
      on conflict (id) do update set ${sql.raw(UPDATE_SET)}`);
  }
  const written = new Map((await readComponents(db, [...next.keys()])).map((r) => [r.id, r]));

  const actors = new Map(writes.filter((w) => w.actor).map((w) => [w.id, w.actor!]));
  await appendEvents(
    db,
    [...written.values()].map((r) => {
      const before = current.get(r.id);
      return {
        componentId: r.id,
        session: r.session,
        sessionTenant: r.sessionTenant,
        kind: opts.event?.kind ?? 'manual',
        actor: actors.get(r.id) ?? opts.actor,
        fromPhase: before?.phase ?? null,
        toPhase: r.phase,
        fromStatus: before?.status ?? null,
        toStatus: r.status,
        action: opts.event?.action ?? null,
        error: r.error && r.error !== before?.error ? r.error : null,
        reason: opts.event?.reason ?? null,
        data: { write: before ? opts.mode : 'create', changed: changes.get(r.id) ?? [] },
      };
    }),
  );

  const rows = ids.map((id) => written.get(id)).filter((r): r is ComponentRow => !!r);
  return { rows, missing, kickStatus, knownTokens: new Set(known.keys()) };
}

/**
 * The domain's component record is the table's row but for what the database keeps, and what only
 * the engine writes (quarantine's counts, the rescue image), checked by the compiler.
 */
type StoredFields = Omit<
  ComponentRow,
  | 'status'
  | 'queuedSeq'
  | 'updatedAt'
  | 'powerDrift'
  | 'failedSessions'
  | 'sessionFailures'
  | 'rescueKernel'
  | 'rescueKernelParameters'
  | 'rescueInitrd'
>;
/** @public a compile-time check, read by no one. */
export const FIELDS_MATCH: [StoredFields, ComponentFields] extends [ComponentFields, StoredFields] ? true : never = true;

function fields(r: ComponentRow): ComponentFields {
  const {
    status: _s,
    queuedSeq: _q,
    updatedAt: _u,
    powerDrift: _d,
    failedSessions: _f,
    sessionFailures: _sf,
    rescueKernel: _rk,
    rescueKernelParameters: _rp,
    rescueInitrd: _ri,
    ...f
  } = r;
  return f;
}

/**
 * Every column a write sets: all but the generated status, the rollout queue position (the engine's)
 * the power drift mark (the drift sweep's), the run of failed sessions (session completion's and
 * releaseQuarantine's, db/components/quarantine.ts) and the rescue image (rescue and unrescue
 * sessions' setup, db/components/setup.ts: a BOS PUT or PATCH of a rescued node leaves it rescued).
 */
const ENGINE_KEPT = new Set([
  'status',
  'queuedSeq',
  'powerDrift',
  'failedSessions',
  'sessionFailures',
  'rescueKernel',
  'rescueKernelParameters',
  'rescueInitrd',
]);
const WRITTEN = Object.entries(getTableColumns(components)).filter(([k]) => !ENGINE_KEPT.has(k));
const COLUMNS = WRITTEN.map(([, c]) => `"${c.name}"`).join(', ');
const RECORD_TYPE = WRITTEN.map(([, c]) => `"${c.name}" ${c.getSQLType()}`).join(', ');
const UPDATE_SET = WRITTEN.filter(([k]) => k !== 'id')
  .map(([, c]) => `"${c.name}" = excluded."${c.name}"`)
  .join(', ');

/** Columns by their SQL names, as jsonb_to_recordset reads them (dates travel as ISO strings). */
function toRecord(f: ComponentFields, now: Date): Record<string, unknown> {
  const row: Record<string, unknown> = { ...f, updatedAt: now };
  return Object.fromEntries(WRITTEN.map(([k, c]) => [c.name, row[k] ?? null]));
}
