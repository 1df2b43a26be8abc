/**
 * session-completion (BOS operators/session_completion.py).
 * Selects:
 * - running sessions with no enabled component and no staged component left.
 * Does: marks each complete with its end time, saves the extended status snapshot and counts each
 * of its nodes for quarantine (a failure adds one, a success resets), in one transaction per
 * session, and writes one log line with its result and its failures by reason.
 */
import { defineOperator, oneByOne } from '../engine/operator.ts';
import { done } from '../engine/outcome.ts';
import { logSessionEnd, recordSessionOutcomes } from '../engine/session-outcomes.ts';
import { completeSession, finishedSessions } from '../db/sessions/lifecycle.ts';

export const sessionCompletion = defineOperator({
  name: 'session-completion',
  select: (ctx) => oneByOne(finishedSessions(ctx.db)),
  record: recordSessionOutcomes,
  trace: ([s]) => s?.traceContext,
  async decidePage(ctx, [s]) {
    return {
      outcomes: [[s!, done]],
      async write(tx) {
        const end = await completeSession(tx, s!, null, ctx.actor);
        if (end) logSessionEnd(ctx.log, s!, end);
      },
    };
  },
});
