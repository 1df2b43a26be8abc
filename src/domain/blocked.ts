/**
 * A node held up by an outside service that is failing, told apart from a node that failed. Two
 * situations, both with the node still enabled and not failed:
 * - its power cannot be read (status row U1: on hold with the BMC's cause as its reason): the BMC;
 * - a call it needed failed transiently (reason service_unavailable): the service its error names
 *   (adapters/errors.ts ServiceError writes "PCS POST /... failed (HTTP 503): ...").
 * bootorch keeps asking in both: the node goes on when the service answers, or (power) fails with the
 * cause at power_unknown_timeout. The console shows them as blocked by the service, not as failures.
 */
import { POWER_UNKNOWN_CAUSES } from './readings.ts';

/** Services whose name starts a ServiceError's text. */
export const OUTSIDE_SERVICES = ['PCS', 'HSM', 'BSS', 'CFS', 'IMS', 'BMC'] as const;

export interface BlockFacts {
  enabled: boolean;
  status: string;
  failureReason: string;
  error: string;
}

/**
 * What holds a node whose power cannot be read: its BMC, or bootorch itself when it could not ask
 * (local_resources: out of open files or ports).
 */
export function powerHolder(reason: string): 'BMC' | 'bootorch' {
  return reason === 'local_resources' ? 'bootorch' : 'BMC';
}

/** The service a node waits on (PCS, HSM, BSS, CFS, IMS, BMC; bootorch itself), or null when it is not blocked by one. */
export function blockingService(c: BlockFacts): string | null {
  if (!c.enabled || c.status === 'failed') return null;
  if (c.status === 'on_hold' && (POWER_UNKNOWN_CAUSES as readonly string[]).includes(c.failureReason)) return powerHolder(c.failureReason);
  if (c.failureReason !== 'service_unavailable') return null;
  const first = c.error.split(' ', 1)[0] ?? '';
  return (OUTSIDE_SERVICES as readonly string[]).includes(first) ? first : null;
}

/** A time of day as the console and explain's words show it (UTC, to the second). */
export function clockTime(d: Date): string {
  return `${d.toISOString().slice(11, 19)} UTC`;
}
