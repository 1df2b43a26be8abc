/**
 * The deploy agent's heartbeat (the `deployHeartbeat` mutation, and the simulator's agents): Ironic's
 * lookup + heartbeat in one call. The agent says where it is (starting, downloading, verifying,
 * writing, written, or failed with a reason); the installed system says `active` once it runs. The
 * answer carries the deploy's instructions, so the agent's first heartbeat is its lookup. A state
 * change is one event on the node's timeline and a status kick, in one transaction; a repeated
 * heartbeat only stamps the time. What bootorch checks rather than believes: WRITTEN carries the
 * sha256 the agent computed over what it wrote, and one that is not the image's fails the deploy
 * (checksum_mismatch); ACTIVE is never the agent's to say (domain/deploy.ts senderMaySend). The
 * agent's credential (scope deploy) is revoked when its deploy is written or failed, the installed
 * system's (scope disk) once its ACTIVE is taken.
 */
import type { Db } from '../db/client.ts';
import { afterCommit, transaction } from '../db/tx.ts';
import { revokeApiTokensOf } from '../db/tokens.ts';
import { forgetTokens } from '../auth/token-rows.ts';
import { appendEvents } from '../db/events.ts';
import { readComponents } from '../db/components/read.ts';
import { deployOf, moveDeploys } from '../db/deploys.ts';
import {
  heartbeatAllowed,
  senderMaySend,
  type AgentFailure,
  type DeployRecord,
  type HeartbeatSender,
  type HeartbeatState,
} from '../domain/deploy.ts';
import { parseComponentId } from '../domain/xname.ts';
import type { Scheduler } from './scheduler.ts';

export interface HeartbeatInput {
  id: string;
  state: HeartbeatState;
  /** Required when state is failed. */
  reason?: AgentFailure | null;
  message?: string | null;
  /** Required with written: sha256:<hex> of what the agent wrote. */
  checksum?: string | null;
  actor: string;
  sender: HeartbeatSender;
}

export type HeartbeatResult =
  | { ok: true; state: HeartbeatState; deploy: DeployRecord; heartbeatIntervalSeconds: number }
  | { ok: false; code: 'NOT_FOUND' | 'CONFLICT' | 'FORBIDDEN'; message: string };

export async function deployHeartbeat(
  db: Db,
  scheduler: Scheduler,
  input: HeartbeatInput,
  o: { heartbeatTimeoutSeconds: number },
): Promise<HeartbeatResult> {
  const parsed = parseComponentId(input.id);
  if ('error' in parsed) return { ok: false, code: 'NOT_FOUND', message: `no component "${input.id.slice(0, 127)}": ${parsed.error}` };
  const id = parsed.id;
  if (!senderMaySend(input.sender, input.state)) {
    const who = input.sender === 'agent' ? "the deploy agent's credential" : "the installed system's credential";
    return { ok: false, code: 'FORBIDDEN', message: `${who} may not send ${input.state.toUpperCase()} for ${id}` };
  }
  if (input.state === 'written' && !input.checksum)
    return { ok: false, code: 'CONFLICT', message: `WRITTEN needs the sha256 checksum the agent computed over what it wrote` };
  return transaction(db, async (tx): Promise<HeartbeatResult> => {
    const [c] = await readComponents(tx, [id]);
    const d = await deployOf(tx, id);
    if (!c || !d) return { ok: false, code: 'NOT_FOUND', message: `no disk deploy for ${id}` };
    if (c.session !== d.session || c.sessionTenant !== d.sessionTenant || !c.enabled)
      return { ok: false, code: 'CONFLICT', message: `${id} is not deploying any more (${c.status}, session ${c.session || 'none'})` };
    if (!heartbeatAllowed(d.state, input.state))
      return { ok: false, code: 'CONFLICT', message: `the deploy of ${id} is ${d.state}: ${input.state} does not follow` };
    // WRITTEN with a checksum that is not the image's: the disk does not hold what was asked for.
    const mismatch = input.state === 'written' && input.checksum !== d.spec.image.checksum;
    const state: HeartbeatState = mismatch ? 'failed' : input.state;
    const reason = mismatch ? 'checksum_mismatch' : input.state === 'failed' ? (input.reason ?? 'write_error') : '';
    const message = mismatch
      ? `WRITTEN with ${String(input.checksum).slice(0, 80)}, but the image is ${d.spec.image.checksum}`
      : (input.message ?? '').slice(0, 1000);
    const moved = await moveDeploys(tx, [id], { state, reason, message, heartbeat: true }, [d.state]);
    if (moved.length === 0) return { ok: false, code: 'CONFLICT', message: `the deploy of ${id} changed meanwhile; send again` };
    // A new state, or a new step within one (the agent's WRITING "config drive: ..." after the image's
    // WRITING), is on the timeline; the keeper's repeats (no message) are not.
    if (d.state !== state || (message !== '' && message !== d.message)) {
      await appendEvents(tx, [
        {
          componentId: id,
          session: c.session,
          sessionTenant: c.sessionTenant,
          kind: state === 'failed' ? 'error' : 'report',
          actor: input.actor,
          error: state === 'failed' ? `Disk deploy failed: ${message || reason}` : null,
          reason: reason || null,
          data: { deploy: state, from: d.state, ...(message ? { message } : {}) },
        },
      ]);
      // A deploy that ends (written or failed) frees its slot in the deploy budget: power-on looks at
      // once for a node waiting for one, rather than at its next recheck.
      if (d.state !== state) await scheduler.kick(tx, state === 'written' || state === 'failed' ? ['status', 'power-on'] : ['status']);
    }
    // The agent's credential ends with its step (Ironic wipes its token); the installed system's with its report.
    const ended = state === 'written' || state === 'failed' ? 'deploy' : state === 'active' ? 'disk' : undefined;
    if (ended) {
      const revoked = await revokeApiTokensOf(tx, 'node', id, new Date(), ended);
      afterCommit(tx, () => forgetTokens(revoked));
    }
    if (mismatch) return { ok: false, code: 'CONFLICT', message: `refused: ${message}; the deploy of ${id} failed (checksum_mismatch)` };
    return {
      ok: true,
      state: input.state,
      deploy: d.spec,
      heartbeatIntervalSeconds: Math.max(1, Math.floor(o.heartbeatTimeoutSeconds / 4)),
    };
  });
}
