/**
 * BOS v2 options (reference §1.5) with their defaults and ranges, plus bootorch's own.
 * Stored as one JSON row; read fills in defaults and drops unknown keys, as BOS does.
 */
import { z } from 'zod';
import { AGE_RE, isAge, isTtl, MAX_AGE_MESSAGE, TTL_RE } from './age.ts';
import { QUARANTINE_FAILURES_KEPT } from './quarantine.ts';

const timeout = z.number().int().min(10).max(86400);
const seconds = z.number().int().min(0).max(1_048_576);

export const optionsShape = {
  /** Read timeout for BSS calls, seconds (default 20). */
  bss_read_timeout: timeout.default(20),
  /** Read timeout for CFS calls, seconds (default 20). */
  cfs_read_timeout: timeout.default(20),
  /** Read timeout for HSM calls, seconds (default 20). */
  hsm_read_timeout: timeout.default(20),
  /** Read timeout for image manifest reads, seconds (default 20). */
  ims_read_timeout: timeout.default(20),
  /** Read timeout for PCS calls, seconds (default 20). */
  pcs_read_timeout: timeout.default(20),
  /** Complete sessions older than this (by start time) are deleted; `0` disables (default 7d). */
  cleanup_completed_session_ttl: z
    .string()
    .regex(AGE_RE, 'must be an age like 0, 30m, 12h, 7d or 2w')
    .refine(isAge, MAX_AGE_MESSAGE)
    .default('7d'),
  /** applyStaged empties staged state after applying it (default false). */
  clear_stage: z.boolean().default(false),
  /** Actual state older than this is cleared; also sent to nodes as bos_update_frequency (default 4h, at least 1h). */
  component_actual_state_ttl: z
    .string()
    .regex(TTL_RE, 'must be at least one hour, like 4h, 1d or 1w')
    .refine(isTtl, MAX_AGE_MESSAGE)
    .default('4h'),
  /** Disk deploys: the deploy agent silent this long fails the node (heartbeat_timeout), seconds (default 300). */
  deploy_heartbeat_timeout: seconds.default(300),
  /**
   * bootorch: disk deploys admitted at once, over every session (Ironic's max_concurrent_deploy,
   * default 250); more wait, powered off, for a slot (domain/deploy-budget.ts).
   */
  max_concurrent_deploys: z.number().int().min(1).max(1_000_000).default(250),
  /**
   * bootorch: the image bandwidth disk deploys may use in total, Mbit/s (0 = no limit; default 8000:
   * a 10 GbE image server with a fifth left for boot scripts, ramdisks and the API).
   */
  deploy_image_bandwidth: z.number().int().min(0).max(10_000_000).default(8000),
  /** bootorch: the rate one deploy downloads its image at, Mbit/s (a node's provisioning link; default 1000). */
  deploy_node_bandwidth: z.number().int().min(1).max(1_000_000).default(1000),
  /** Max attempts per power action (default 3; 0 fails before the first attempt). */
  default_retry_policy: seconds.default(3),
  /**
   * bootorch: the image manifest (as a boot set's `path`) a RESCUE session boots a boot set's nodes
   * into when the boot set names no `rescue_image`; '' (the default) means none (docs/rescue.md).
   */
  default_rescue_image: z.string().max(4095).default(''),
  /** Period of the discovery operator, seconds (default 300). */
  discovery_frequency: z.number().int().min(0).max(33_554_432).default(300),
  /** Image not found is an error rather than a warning (default false). */
  ims_errors_fatal: z.boolean().default(false),
  /** Image must exist (default false). */
  ims_images_must_exist: z.boolean().default(false),
  /**
   * bootorch: seconds from an action job's transient failure (a service 5xx, a timeout, a refused
   * connection) to pg-boss's first retry of it (1-3600, default 1). A rollout policy's jobRetryDelay overrides it.
   */
  job_retry_delay: z.number().int().min(1).max(3600).default(1),
  /**
   * bootorch: each further retry of an action job waits about twice as long, with jitter (pg-boss's
   * retryBackoff), up to job_retry_max_delay (default true). A rollout policy's jobRetryBackoff overrides it.
   */
  job_retry_backoff: z.boolean().default(true),
  /**
   * bootorch: the longest wait before an action job's retry, seconds (1-86400, default 5; never below
   * job_retry_delay). pg-boss doubles without a ceiling. A rollout policy's jobRetryMaxDelay overrides it.
   */
  job_retry_max_delay: z.number().int().min(1).max(86_400).default(5),
  /**
   * bootorch: sessions over more nodes than this, or whose limit is `all`, wait for a second admin's
   * approval before their first action (0 = never, the default; a site sets it, e.g. 500).
   */
  approval_node_threshold: z.number().int().min(0).max(1_000_000).default(0),
  /**
   * bootorch: a node that failed this many sessions in a row (failures of its own: not an abort, not an
   * outside service down) is quarantined: new sessions leave it out unless their limit names it, until
   * it is released (0-20; 0 = never, the default: a broken image or configuration fails every node of a
   * session alike, and would quarantine them all).
   */
  quarantine_after_failed_sessions: z.number().int().min(0).max(QUARANTINE_FAILURES_KEPT).default(0),
  /**
   * bootorch: standalone workers keep each IPMI node's serial console through SOL (one `ipmitool sol
   * activate` per node, in the one worker holding the capture lock); false stops every session (default true).
   */
  console_capture: z.boolean().default(true),
  /** bootorch: console bytes kept per node and boot attempt, the oldest dropped first (1 KiB-16 MiB, default 256 KiB). */
  console_bytes_per_boot: z.number().int().min(1024).max(16_777_216).default(262_144),
  /** bootorch: boot attempts whose console is kept per node, the oldest dropped first (1-100, default 5). */
  console_boots_kept: z.number().int().min(1).max(100).default(5),
  /** bootorch: console text older than this many days is dropped (1-3650, default 14). */
  console_retention_days: z.number().int().min(1).max(3650).default(14),
  /**
   * bootorch: a node's SOL session silent this long is activated again, seconds (0 = never; default 300):
   * ipmitool does not notice a session the BMC ended, and a quiet console costs one re-activation per period.
   */
  console_idle_reconnect: z.number().int().min(0).max(86_400).default(300),
  /** bootorch: viewers may read node consoles (which can hold secrets); otherwise operators and admins only (default false). */
  console_viewers: z.boolean().default(false),
  /** Log level applied live (default INFO). */
  logging_level: z
    .string()
    .regex(/^(debug|info|warning|error|critical)$/i, 'must be DEBUG, INFO, WARNING, ERROR or CRITICAL')
    .default('INFO'),
  /** On but not reporting the desired artifacts this long after power-on: reboot, seconds (default 1200). */
  max_boot_wait_time: seconds.default(1200),
  /** Operator chunk size and one outside call per chunk (default 2800; 0 = no limit). */
  max_component_batch_size: z.number().int().min(0).max(131_071).default(2800),
  /** From an off call to the (next) forceful off, seconds (default 300). */
  max_power_off_wait_time: seconds.default(300),
  /** Still off this long after power-on: retry, seconds (default 120). */
  max_power_on_wait_time: seconds.default(120),
  /** Safety-net period of every other operator, seconds (default 15). */
  polling_frequency: seconds.default(15),
  /**
   * bootorch: a node's power read unknown (its BMC unreachable, refusing the login, timing out or
   * answering an error; PCS answering an error or `undefined` for it) is held with the cause at once,
   * and fails with it (bmc_unreachable, bmc_auth_failed, ...) once its power has stayed unknown this
   * long, counted from the first unknown read with no known read since, seconds (default 60; 0 fails
   * at the first unknown read). A session's rollout policy (powerUnknownTimeout) overrides it.
   */
  power_unknown_timeout: seconds.default(60),
  /**
   * bootorch: done nodes whose power is re-read per second to find power drift (a node off that bootorch
   * left on, or on that it left off), 0-1000, default 20 (10,000 nodes in about 8 minutes); 0 turns the
   * sweep off. Drift is only seen (an event, a metric, a mark on the component): nothing is powered.
   */
  power_drift_rate: z.number().min(0).max(1000).default(20),
  /** NID-looking node_list or limit entries are rejected instead of warned about (default false). */
  reject_nids: z.boolean().default(false),
  /** createSession needs a non-empty limit (default false). */
  session_limit_required: z.boolean().default(false),
  /**
   * bootorch: while components wait on hardware (a power transition or configuration in flight),
   * status re-reads power and configuration this often, seconds (default 1). BOS has no such thing.
   */
  transit_polling_frequency: z.number().min(0.5).max(3600).default(1),
};

export const optionsSchema = z.object(optionsShape);
export type Options = z.infer<typeof optionsSchema>;
/** A patch: every field optional, unknown fields rejected. */
export const optionsPatchSchema = z
  .object(
    Object.fromEntries(Object.entries(optionsShape).map(([k, v]) => [k, (v as z.ZodDefault<z.ZodTypeAny>).removeDefault().optional()])),
  )
  .strict();

export const DEFAULT_OPTIONS: Options = optionsSchema.parse({});

/** Stored JSON -> options: defaults filled, unknown keys dropped, invalid stored values replaced by defaults. */
export function readOptions(stored: Record<string, unknown> | null | undefined): Options {
  const out: Record<string, unknown> = { ...DEFAULT_OPTIONS };
  for (const [k, schema] of Object.entries(optionsShape)) {
    if (stored && k in stored) {
      const r = (schema as z.ZodTypeAny).safeParse(stored[k]);
      if (r.success) out[k] = r.data;
    }
  }
  return out as Options;
}
