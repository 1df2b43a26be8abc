/**
 * The closed set of reasons a component fails (or is currently in trouble). Every failure carries
 * one, so a session's failures can be grouped by cause, not only by free error text.
 */
export const FAILURE_REASONS = {
  power_off_timeout: 'the node did not power off (graceful and forceful attempts exhausted)',
  power_on_timeout: 'the node did not power on within max_power_on_wait_time',
  boot_never_reported: 'the node powered on but never reported booting (max_boot_wait_time)',
  booted_wrong_artifacts: 'the node reported booting artifacts other than the desired ones',
  configuration_failed: 'CFS reported the configuration failed',
  configuration_unknown: 'CFS reported no valid configuration status (e.g. the configuration does not exist)',
  service_unavailable: 'an outside service (HSM, PCS, BSS, CFS, images) failed or timed out',
  bmc_unreachable:
    "the node's power stayed unknown past power_unknown_timeout: its BMC did not answer (connection refused, no route, no IPMI session)",
  bmc_auth_failed: "the node's power stayed unknown past power_unknown_timeout: its BMC refused the login (wrong user or password)",
  bmc_timeout:
    "the node's power stayed unknown past power_unknown_timeout: its BMC took the connection but did not answer within the per-call timeout",
  bmc_error:
    "the node's power stayed unknown past power_unknown_timeout: its BMC answered with an error (HTTP 4xx/5xx, a failed command) or an answer that cannot be read",
  local_resources:
    "the node's power stayed unknown past power_unknown_timeout: bootorch could not ask its BMC, being out of open files (EMFILE, ENFILE) or local ports itself; the BMC is not at fault",
  not_in_inventory: 'the node is not known to the inventory (HSM), power control (PCS) or CFS',
  boot_parameters_failed: 'BSS refused or failed to store the boot parameters',
  retry_limit: 'the retry limit was reached with no more specific cause recorded',
  aborted: 'the session was aborted by an operator',
  checksum_mismatch: "disk deploy: the image's sha256 is not the checksum the boot set gives",
  no_matching_disk: "disk deploy: no disk of the node meets the boot set's root device hints",
  write_error: 'disk deploy: writing the image (or the config drive) to the disk failed',
  image_unreachable: 'disk deploy: the deploy agent could not download the image',
  heartbeat_timeout: 'disk deploy: the deploy agent stopped heartbeating for longer than deploy_heartbeat_timeout',
} as const;

export type FailureReason = keyof typeof FAILURE_REASONS;
