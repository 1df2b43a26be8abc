/**
 * Boot tickets (Ironic's agent token, issued on the agent's first call): a one-time secret bootorch
 * hands a node that it expects to boot now, in its boot script (purpose report or deploy) or in its
 * config drive (purpose disk, for the installed system). The node's first call exchanges it for a
 * node credential of that scope (auth/node-scopes.ts), bound to the node, with a lifetime; a second
 * exchange of the same ticket is refused and recorded on the node's timeline (someone else may hold
 * its ticket). A disk ticket is exchangeable only once bootorch has switched that deploy to its disk.
 * Tickets themselves: auth/boot-tickets.ts.
 */
import type { Db } from '../../db/client.ts';
import { transaction } from '../../db/tx.ts';
import { bootGrantPruner, grantOfTicket, spendTicket, type BootGrantPruner } from '../../db/boot-grants.ts';
import { deployOf } from '../../db/deploys.ts';
import { appendEvents } from '../../db/events.ts';
import { componentSessionOf } from '../../db/node-inventory.ts';
import { createNodeToken } from '../../auth/api-tokens.ts';
import type { NodeScope } from '../../auth/node-scopes.ts';
import { TICKET_RE, ticketHash } from '../../auth/boot-tickets.ts';

export type ExchangeResult =
  | { ok: true; token: string; node: string; scope: NodeScope; expiresAt: Date }
  | { ok: false; status: 401 | 409; message: string };

/** One answer for every ticket that is not (or no longer) good, so a guesser learns nothing. */
const NOT_ACCEPTED = { ok: false, status: 401, message: 'boot ticket not accepted' } as const;

export interface ExchangeOptions {
  /** Lifetime of the credential, seconds. */
  ttlSeconds: number;
  now?: () => Date;
  /** Told about a ticket presented again (warn level). */
  warn?: (message: string, data: Record<string, unknown>) => void;
  /** Prunes ended grants after an exchange, in the background (default this process's: bootGrantPruner). */
  pruner?: BootGrantPruner;
}

export async function exchangeTicket(db: Db, ticket: string, o: ExchangeOptions): Promise<ExchangeResult> {
  if (!TICKET_RE.test(ticket)) return NOT_ACCEPTED;
  const now = (o.now ?? (() => new Date()))();
  const result = await transaction(db, async (tx): Promise<ExchangeResult> => {
    const grant = await grantOfTicket(tx, ticketHash(ticket), now);
    if (!grant) return NOT_ACCEPTED;
    if (grant.exchangedAt) {
      // The installed system presents its drive's ticket on every boot: once its deploy is active, a
      // reboot is what a second exchange means, not a stolen ticket.
      if (grant.purpose === 'disk' && (await deployOf(tx, grant.node))?.state === 'active') return NOT_ACCEPTED;
      const message = `the ${grant.purpose} ticket of boot attempt ${grant.attempt} was presented again after it was exchanged at ${grant.exchangedAt.toISOString()}: someone else may hold this node's ticket`;
      await appendEvents(tx, [
        {
          componentId: grant.node,
          ...(await componentSessionOf(tx, grant.node)),
          kind: 'error',
          actor: 'api:boot-exchange',
          error: message,
          data: { ticket: 'reused', attempt: grant.attempt, purpose: grant.purpose },
        },
      ]);
      o.warn?.(message, { xname: grant.node, attempt: grant.attempt, purpose: grant.purpose });
      return NOT_ACCEPTED;
    }
    if (grant.purpose === 'disk') {
      // The installed system's ticket: only for the deploy it was written for, once bootorch itself
      // switched that node to its disk (Ironic: the agent's token ends with the deploy step).
      const d = await deployOf(tx, grant.node);
      if (!d || d.createdAt.getTime() > grant.createdAt.getTime()) return NOT_ACCEPTED;
      if (d.state !== 'booting_disk')
        return { ok: false, status: 409, message: `the deploy of ${grant.node} is ${d.state}, not booting from its disk` };
    }
    if (!(await spendTicket(tx, grant.attempt, now))) return NOT_ACCEPTED;
    const issued = await createNodeToken(tx, grant.node, { ttlSeconds: o.ttlSeconds, scope: grant.purpose, now: () => now });
    return { ok: true, token: issued.token, node: grant.node, scope: grant.purpose, expiresAt: issued.info.expiresAt! };
  });
  if (result.ok) (o.pruner ?? bootGrantPruner).soon(db, now);
  return result;
}
