/**
 * session-completion (BOS operators/session_completion.py).
 * Selects:
 * - running sessions with no enabled component and no staged component left.
 * Does: marks each complete with its end time and saves the extended status snapshot, in one
 * transaction.
 */
import type { OperatorDef } from '../engine/operator.ts';
import { finishedSessions, markComplete } from '../db/engine/sessions.ts';
import { transaction, type Tx } from '../db/tx.ts';
import { saveSessionStatusSnapshot } from '../db/queries/session-status.ts';

export const sessionCompletion: OperatorDef = {
  name: 'session-completion',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    for (const s of await finishedSessions(ctx.pool)) {
      await transaction(ctx.pool, async (tx) => {
        if (await markComplete(tx.client, s.tenantKey, s.name, null)) await snapshotSession(tx, s.tenantKey, s.name);
      });
      ctx.log.info({ session: s.name }, 'session complete');
    }
  },
};

/** Save the extended status of a session that just completed (BOS POST /sessions/{id}/status). */
export async function snapshotSession(tx: Tx, tenantKey: string, name: string): Promise<void> {
  await saveSessionStatusSnapshot(tx.db, { tenantKey, name });
}
