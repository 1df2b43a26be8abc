/**
 * session-cleanup (BOS operators/session_cleanup.py).
 * Selects:
 * - complete sessions whose start time is older than cleanup_completed_session_ttl (`0` disables),
 *   of every tenant (BOS skips tenants' sessions by accident; bootorch does not).
 * Does: deletes them and their saved status.
 */
import { defineOperator } from '../engine/operator.ts';
import { done } from '../engine/outcome.ts';
import { deleteOldSessions } from '../db/sessions/lifecycle.ts';
import { ageSeconds } from '../domain/age.ts';

/** The one item: the age beyond which complete sessions go (the deletion is one statement). */
export const sessionCleanup = defineOperator<{ olderThanSeconds: number }>({
  name: 'session-cleanup',
  async *select(ctx) {
    const ttl = ageSeconds(ctx.options.cleanup_completed_session_ttl);
    if (ttl > 0) yield [{ olderThanSeconds: ttl }];
  },
  record: async () => {},
  async decidePage(ctx, [item]) {
    return {
      outcomes: [[item!, done]],
      async write(tx) {
        const n = await deleteOldSessions(tx, item!.olderThanSeconds);
        if (n) ctx.log.info({ deleted: n }, 'old sessions deleted');
      },
    };
  },
});
