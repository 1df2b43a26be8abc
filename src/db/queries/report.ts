/**
 * The node reporter's write (reference §5): "this node booted with this BSS referral token". Shared by
 * the reportBootState mutation and the in-process simulator, so both take exactly this path.
 */
import type pg from 'pg';
import type { Kicker } from '../../engine/kick.ts';
import { transaction } from '../tx.ts';
import type { ComponentRow } from '../schema.ts';
import { parseComponentId } from '../../domain/xname.ts';
import { refusesActualStateWrite } from '../../domain/components.ts';
import { lockComponents } from './components.ts';
import { writeComponents } from './component-writes.ts';

export interface ReportInput {
  id: string;
  /** bss_referral_token from the node's kernel command line. */
  token: string;
  actor: string;
}

export type ReportResult =
  | { ok: true; component: ComponentRow; tokenKnown: boolean }
  | { ok: false; code: 'NOT_FOUND' | 'CONFLICT'; message: string };

/**
 * One transaction: refuse while bootorch is mid-transition on the node (BOS's 409), else record the
 * token; a token bootorch set maps to its boot artifacts and stamps the actual state, an unknown one
 * keeps the old artifacts and timestamp (so they age out). Appends a 'report' event, kicks status.
 * Repeating a report is harmless: it writes the same state again and refreshes its timestamp.
 */
export async function reportBootState(pool: pg.Pool, kicker: Kicker, input: ReportInput): Promise<ReportResult> {
  const parsed = parseComponentId(input.id);
  if ('error' in parsed) return { ok: false, code: 'NOT_FOUND', message: `no component "${input.id.slice(0, 127)}": ${parsed.error}` };
  const id = parsed.id;
  return transaction(pool, async (tx) => {
    const [current] = await lockComponents(tx.db, [id]);
    if (!current) return { ok: false, code: 'NOT_FOUND', message: `no component "${id}"` };
    if (refusesActualStateWrite(current)) {
      return { ok: false, code: 'CONFLICT', message: `Actual state can not be updated: ${id} is ${current.status} after ${current.lastAction || 'no action'}; report again later` };
    }
    const r = await writeComponents(tx.db, [{ id, body: { actualState: { bssToken: input.token } } }], {
      mode: 'patch', actor: input.actor, tenantKey: '', event: { kind: 'report', reason: 'node reported its boot' },
    });
    await kicker.kick(tx, ['status']);
    return { ok: true, component: r.rows[0]!, tokenKnown: r.knownTokens.has(input.token) };
  });
}
