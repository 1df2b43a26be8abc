/**
 * How the session operators' outcomes become data: a failed session completes with the error (as
 * BOS's setup failures do) and its status snapshot; a session that continues after a problem keeps
 * its row as it is and is looked at again (the problem goes to the log).
 */
import type { Db } from '../db/client.ts';
import type { SessionKey } from '../db/sessions/rows.ts';
import { completeSession } from '../db/sessions/lifecycle.ts';
import type { EngineContext } from './operator.ts';
import type { Outcome } from './outcome.ts';

export async function recordSessionOutcomes(tx: Db, ctx: EngineContext, outcomes: Array<[SessionKey, Outcome]>): Promise<void> {
  for (const [s, o] of outcomes) {
    if (o.kind === 'failed') {
      await completeSession(tx, s, o.problem.error);
      ctx.log.warn({ session: s.name, error: o.problem.error }, 'session failed');
    } else if (o.kind === 'continue' && o.problem) {
      ctx.log.warn({ session: s.name, err: o.problem.error }, 'session will be retried');
    }
  }
}
