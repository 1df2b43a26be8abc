/**
 * Boot tickets: the one-time secrets bootorch hands a node it expects to boot now (in its boot script,
 * or in its config drive for the installed system), exchanged once for a scoped node credential
 * (src/api/boot/exchange.ts). Format `btk_<secret>`, 32 random bytes base64url; only the SHA-256 of
 * the whole ticket is stored (db/boot-grants.ts), as for API tokens.
 */
import { createHash, randomBytes } from 'node:crypto';

export const TICKET_RE = /^btk_[A-Za-z0-9_-]{43}$/;

export const ticketHash = (ticket: string): string => createHash('sha256').update(ticket, 'utf8').digest('hex');

export function newTicket(): { ticket: string; hash: string } {
  const ticket = `btk_${randomBytes(32).toString('base64url')}`;
  return { ticket, hash: ticketHash(ticket) };
}

/** A boot attempt's id (db/boot-grants.ts): random, 32 hex digits; iPXE's failure URLs carry it. */
export const newAttemptId = (): string => randomBytes(16).toString('hex');
export const ATTEMPT_RE = /^[0-9a-f]{32}$/;
