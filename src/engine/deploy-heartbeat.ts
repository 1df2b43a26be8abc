/**
 * The deploy agent's heartbeat (the `deployHeartbeat` mutation, and the simulator's agents): Ironic's
 * lookup + heartbeat in one call. The agent says where it is (starting, downloading, verifying,
 * writing, written, or failed with a reason); the installed system says `active` once it runs. The
 * answer carries the deploy's instructions, so the agent's first heartbeat is its lookup. A state
 * change is one event on the node's timeline and a status kick, in one transaction; a repeated
 * heartbeat only stamps the time.
 */
import type { Db } from '../db/client.ts';
import { transaction } from '../db/tx.ts';
import { appendEvents } from '../db/events.ts';
import { readComponents } from '../db/components/read.ts';
import { deployOf, moveDeploys } from '../db/deploys.ts';
import { heartbeatAllowed, type AgentFailure, type DeployRecord, type HeartbeatState } from '../domain/deploy.ts';
import { parseComponentId } from '../domain/xname.ts';
import type { Scheduler } from './scheduler.ts';

export interface HeartbeatInput {
  id: string;
  state: HeartbeatState;
  /** Required when state is failed. */
  reason?: AgentFailure | null;
  message?: string | null;
  actor: string;
}

export type HeartbeatResult =
  | { ok: true; state: HeartbeatState; deploy: DeployRecord; heartbeatIntervalSeconds: number }
  | { ok: false; code: 'NOT_FOUND' | 'CONFLICT'; message: string };

export async function deployHeartbeat(
  db: Db,
  scheduler: Scheduler,
  input: HeartbeatInput,
  o: { heartbeatTimeoutSeconds: number },
): Promise<HeartbeatResult> {
  const parsed = parseComponentId(input.id);
  if ('error' in parsed) return { ok: false, code: 'NOT_FOUND', message: `no component "${input.id.slice(0, 127)}": ${parsed.error}` };
  const id = parsed.id;
  return transaction(db, async (tx) => {
    const [c] = await readComponents(tx, [id]);
    const d = await deployOf(tx, id);
    if (!c || !d) return { ok: false, code: 'NOT_FOUND', message: `no disk deploy for ${id}` };
    if (c.session !== d.session || c.sessionTenant !== d.sessionTenant || !c.enabled)
      return { ok: false, code: 'CONFLICT', message: `${id} is not deploying any more (${c.status}, session ${c.session || 'none'})` };
    if (!heartbeatAllowed(d.state, input.state))
      return { ok: false, code: 'CONFLICT', message: `the deploy of ${id} is ${d.state}: ${input.state} does not follow` };
    const reason = input.state === 'failed' ? (input.reason ?? 'write_error') : '';
    const message = (input.message ?? '').slice(0, 1000);
    const moved = await moveDeploys(tx, [id], { state: input.state, reason, message, heartbeat: true }, [d.state]);
    if (moved.length === 0) return { ok: false, code: 'CONFLICT', message: `the deploy of ${id} changed meanwhile; send again` };
    // A new state, or a new step within one (the agent's WRITING "config drive: ..." after the image's
    // WRITING), is on the timeline; the keeper's repeats (no message) are not.
    if (d.state !== input.state || (message !== '' && message !== d.message)) {
      await appendEvents(tx, [
        {
          componentId: id,
          session: c.session,
          sessionTenant: c.sessionTenant,
          kind: input.state === 'failed' ? 'error' : 'report',
          actor: input.actor,
          error: input.state === 'failed' ? `Disk deploy failed: ${message || reason}` : null,
          reason: reason || null,
          data: { deploy: input.state, from: d.state, ...(message ? { message } : {}) },
        },
      ]);
      if (d.state !== input.state) await scheduler.kick(tx, ['status']);
    }
    return {
      ok: true,
      state: input.state,
      deploy: d.spec,
      heartbeatIntervalSeconds: Math.max(1, Math.floor(o.heartbeatTimeoutSeconds / 4)),
    };
  });
}
