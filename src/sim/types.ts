/** Shapes shared by the simulated cluster's parts. Field names follow the services they mimic. */
import type { Arch } from '../domain/readings.ts';

export type PowerValue = 'on' | 'off';
/** HSM State as hmcollector/heartbeat would move it with power and boot. */
export type HsmState = 'Off' | 'On' | 'Ready';

export interface SimNode {
  id: string;
  nid: number;
  role: string;
  subRole: string;
  arch: Exclude<Arch, 'Unknown'>;
  class: 'Mountain' | 'River';
  enabled: boolean;
  locked: boolean;
  power: PowerValue;
  hsmState: HsmState;
  /** ISO time of the last power change (PCS lastUpdated). */
  powerUpdated: string;
  /** Power before the last change and when it changed (ms), for the power-status lag. */
  prevPower?: PowerValue;
  powerChangedAt?: number;
  /** Bumped on every power change; agents of an older generation stop (the node rebooted under them). */
  generation: number;
  /** What the node booted, read from its BSS entry at boot time; undefined while off or booting. */
  booted?: { kernel: string; initrd: string; params: string; token: string };
  /** Disk deploys: the next boot is from the disk (a BMC's boot override, once). */
  bootDiskOnce?: boolean;
  /** Disk deploys: the checksum of the image written to the node's disk. */
  diskImage?: string;
  /** Disk deploys: the config drive (filesystem image) written after it, when the deploy had one. */
  configDrive?: Buffer;
}

export interface BssEntry {
  kernel: string;
  initrd: string;
  params: string;
  /** BSS-Referral-Token of the last PUT that covered this host. */
  token: string;
}

/** CFS v3 configuration layer. */
export interface CfsLayer {
  name?: string;
  clone_url?: string;
  source?: string;
  playbook?: string;
  commit?: string;
  branch?: string;
}

export interface CfsConfiguration {
  name: string;
  description?: string;
  last_updated: string;
  layers: CfsLayer[];
}

export type LayerStatus = 'applied' | 'failed' | 'skipped' | 'incomplete';

/** CFS v3 component state layer. */
export interface CfsStateLayer {
  clone_url: string;
  playbook: string;
  commit: string;
  status: LayerStatus;
  last_updated: string;
  session_name?: string;
}

/** CFS v3 component as stored (configuration_status is computed on read). */
export interface CfsComponent {
  id: string;
  desired_config: string;
  state: CfsStateLayer[];
  error_count: number;
  retry_policy?: number;
  enabled: boolean;
  tags: Record<string, string>;
}

/** Node faults: which nodes misbehave, and how. */
export const NODE_FAULTS = [
  'ignoresSoftOff',
  'neverPowersOn',
  /** Soft-Off and Force-Off both fail (a stuck power supply): PCS keeps reading the node on (power_off_timeout). */
  'neverPowersOff',
  'bootsButNeverReports',
  'reportsWrongToken',
  'configurationFails',
  /** PCS reports powerState `undefined`, managementState `unavailable` (BMC unreachable). */
  'powerUndefined',
  /** BSS refuses (400) a boot parameters write naming this node: a permanent failure. */
  'bootParametersRefused',
  /** Disk deploys: the deploy agent goes silent once it starts downloading (heartbeat_timeout). */
  'deployAgentHangs',
  /** Disk deploys: writing the image fails (write_error). */
  'diskWriteFails',
  /** The node's BMC (its Redfish face) takes the connection and never answers: the caller's timeout fires. */
  'bmcDead',
  /** The node's BMC drops the connection without an answer (on a BMC farm's own listener: a reset). */
  'bmcRefuses',
  /** The node's BMC answers after BmcFaultSettings.slowMs. */
  'bmcSlow',
  /** The node's BMC answers BmcFaultSettings.busyStatus (429 or 503) with its Retry-After, to a share of calls. */
  'bmcBusy',
] as const;
export type NodeFault = (typeof NODE_FAULTS)[number];

export const SIM_SERVICES = ['hsm', 'pcs', 'bss', 'cfs', 'ims'] as const;
export type SimService = (typeof SIM_SERVICES)[number];

/** How the BMC faults behave (the nodes with them are chosen as for any node fault). */
export interface BmcFaultSettings {
  /** bmcSlow: ms before the answer (default 10000). */
  slowMs: number;
  /** bmcBusy: the status answered (default 503). */
  busyStatus: 429 | 503;
  /** bmcBusy: the Retry-After header, seconds (default 1; 0 = none sent). */
  retryAfter: number;
  /** bmcBusy: share of calls answered busy, by a seeded draw per call (default 1: every call). */
  busyRate: number;
}

export interface ServiceFault {
  /** Every call fails with 503. */
  down?: boolean;
  /** Fraction of calls (seeded draw) that fail with 500. */
  failRate?: number;
  /** Every call takes this long (ms) before it is answered. */
  slowMs?: number;
  /** Calls never answer: the caller's read timeout fires (in-process: ServiceError 'timeout' at once). */
  timeout?: boolean;
  /** Only calls to these endpoints (as counted, e.g. `POST /transitions`) get the fault; all calls when absent. */
  endpoints?: string[];
}
