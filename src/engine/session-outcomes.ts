/**
 * How the session operators' outcomes become data: a failed session completes with the error (as
 * BOS's setup failures do) and its status snapshot; a session that continues after a problem keeps
 * its row as it is and is looked at again (the problem goes to the log).
 */
import type { Db } from '../db/client.ts';
import type { SessionKey } from '../db/sessions/rows.ts';
import { completeSession, type SessionEnd } from '../db/sessions/lifecycle.ts';
import type { Logger } from 'pino';
import type { EngineContext } from './operator.ts';
import type { Outcome } from './outcome.ts';

export async function recordSessionOutcomes<S extends SessionKey>(
  tx: Db,
  ctx: EngineContext,
  outcomes: Array<[S, Outcome]>,
): Promise<void> {
  for (const [s, o] of outcomes) {
    if (o.kind === 'failed') {
      const end = await completeSession(tx, s, o.problem.error, ctx.actor);
      if (end) logSessionEnd(ctx.log, s, end, o.problem.error);
    } else if (o.kind === 'continue' && o.problem) {
      ctx.log.warn({ session: s.name, err: o.problem.error }, 'session will be retried');
    }
  }
}

/**
 * The one line a session's end writes: its result, its nodes by outcome and its failures by reason,
 * so "97 nodes failed, 95 of them bmc_unreachable" is one line of the log, not 97.
 */
export function logSessionEnd(log: Logger, s: SessionKey, end: SessionEnd, error?: string): void {
  const fields = { session: s.name, ...(s.tenantKey ? { tenant: s.tenantKey } : {}), ...end, ...(error ? { error } : {}) };
  const line = `session ended: ${end.result.replaceAll('_', ' ')}`;
  if (end.result === 'complete') log.info(fields, line);
  else log.warn(fields, line);
}
