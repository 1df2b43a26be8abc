/**
 * What the outside services report about a node, as the domain reasons about it: its power as read
 * (PCS or its BMC), its configuration (CFS), its architecture (HSM). The ports (adapters/ports.ts)
 * return these; the decision tables (status-decision.ts, deploy-decision.ts) read them.
 */

/** HSM's architecture of a node. */
export type Arch = 'X86' | 'ARM' | 'Other' | 'Unknown';

/**
 * Why a node's power could not be read: the BMC did not answer (unreachable), answered too late
 * (timeout), refused the login (auth_failed) or answered with an error or something unreadable
 * (error); not_in_inventory: power control does not know the node (PCS "not found", no BMC
 * registered); local_resources: bootorch itself could not ask (out of open files or local ports). Each is also the failure reason (domain/failures.ts) when the power stays unknown.
 */
export const POWER_UNKNOWN_CAUSES = [
  'bmc_unreachable',
  'bmc_auth_failed',
  'bmc_timeout',
  'bmc_error',
  'not_in_inventory',
  'local_resources',
] as const;
export type PowerUnknownCause = (typeof POWER_UNKNOWN_CAUSES)[number];

/**
 * A node's power as read: on or off, or unknown when the read failed. A failed read is never a
 * state: the decision table has its own rows for unknown (domain/status-decision.ts).
 */
export type PowerState =
  | { state: 'on' | 'off'; error: '' }
  | {
      state: 'unknown';
      cause: PowerUnknownCause;
      /** What went wrong, with the BMC's (or PCS's) own message. */
      error: string;
      /**
       * Nothing went wrong yet: the BMC has not answered within this power-status's wait and its read
       * goes on (bounded by the per-call timeout). No conclusion: the status pass decides nothing for
       * the node until an answer or a failure comes.
       */
      pending?: true;
    };

/** A node's configuration as CFS reports it. */
export type ConfigurationStatus = 'unconfigured' | 'pending' | 'failed' | 'configured';

export interface ConfigComponent {
  id: string;
  desiredConfig: string;
  configurationStatus: ConfigurationStatus;
  enabled: boolean;
  errorCount: number;
  tags: Record<string, string>;
}
