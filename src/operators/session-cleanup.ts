/**
 * session-cleanup (BOS operators/session_cleanup.py).
 * Selects:
 * - complete sessions whose start time is older than cleanup_completed_session_ttl (`0` disables),
 *   of every tenant (BOS skips tenants' sessions by accident; bootorch does not).
 * Does: deletes them and their saved status.
 */
import type { OperatorDef } from '../engine/operator.ts';
import { ageSeconds } from '../domain/age.ts';
import { deleteOldSessions } from '../db/engine/sessions.ts';

export const sessionCleanup: OperatorDef = {
  name: 'session-cleanup',
  period: (o) => o.polling_frequency,
  async run(ctx) {
    const ttl = ageSeconds(ctx.options.cleanup_completed_session_ttl);
    if (ttl === 0) return;
    const n = await deleteOldSessions(ctx.pool, new Date(ctx.now().getTime() - ttl * 1000));
    if (n) ctx.log.info({ deleted: n }, 'old sessions deleted');
  },
};
