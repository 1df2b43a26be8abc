/**
 * What a node credential minted from a boot ticket may do (Ironic's agent token, split by purpose).
 * A boot attempt's ticket is exchanged for one of these (src/api/boot/exchange.ts):
 * - `report`: the booted image's reporter; reportBootState for its own node only.
 * - `deploy`: the deploy agent; deployHeartbeat for its own node (never ACTIVE) and its own config
 *   drive; revoked when the deploy reaches WRITTEN or fails.
 * - `disk`: the installed system, from the ticket bootorch wrote into the config drive; only the
 *   deployHeartbeat ACTIVE of its own node, once bootorch switched the node to its disk.
 * A node token without a scope (issued by an admin: `bootorch token node`, createNodeToken) may make
 * every node call for its node, as before scopes existed.
 */
import type { HeartbeatSender } from '../domain/deploy.ts';
import { isAuthFailure, type AuthFailure, type Principal } from './principal.ts';

export const NODE_SCOPES = ['report', 'deploy', 'disk'] as const;
export type NodeScope = (typeof NODE_SCOPES)[number];

export const isNodeScope = (v: unknown): v is NodeScope => typeof v === 'string' && (NODE_SCOPES as readonly string[]).includes(v);

/** Who sends a deploy heartbeat, by the credential (domain/deploy.ts senderMaySend). */
export function heartbeatSender(p: Principal | AuthFailure | null | undefined): HeartbeatSender {
  const scope = p && !isAuthFailure(p) && p.role === 'node' ? p.scope : undefined;
  return scope === 'deploy' ? 'agent' : scope === 'disk' ? 'installed' : 'any';
}
