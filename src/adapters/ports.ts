/**
 * Ports to the services that touch hardware. Each has an HTTP client (http.ts, the real CSM API)
 * and a simulator (sim.ts); src/adapters/factory.ts picks one. Every method that takes ids may be
 * given any number: implementations chunk requests as their service needs (PCS/HSM by
 * max_component_batch_size, CFS GET 200 / PATCH 1000). Failures throw ServiceError.
 */

import type { Arch, ConfigComponent, PowerState, PowerUnknownCause } from '../domain/readings.ts';

// What the ports return, defined with the domain that reasons about it; here for the adapters' convenience.
export type { Arch, ConfigComponent, ConfigurationStatus, PowerState, PowerUnknownCause } from '../domain/readings.ts';

export interface InventoryNode {
  id: string;
  role: string;
  subRole: string;
  /** HSM Arch; 'Unknown' when HSM has none. */
  arch: Arch;
  enabled: boolean;
  nid?: number;
}

export interface InventoryGroup {
  label: string;
  members: string[];
}

/** HSM (State Manager). Read-only. */
export interface InventoryPort {
  /** GET State/Components?type=Node */
  listNodes(): Promise<InventoryNode[]>;
  /** POST State/Components/Query; unknown ids are omitted. `enabledOnly` adds enabled:["True"]. Empty ids -> []. */
  queryNodes(ids: string[], opts?: { enabledOnly?: boolean }): Promise<InventoryNode[]>;
  /** GET groups */
  groups(): Promise<InventoryGroup[]>;
  /** GET partitions (label = partition name) */
  partitions(): Promise<InventoryGroup[]>;
  /** GET locks/status?type=Node&locked=True -> locked node ids */
  lockedNodes(): Promise<string[]>;
}

export type PowerOperation = 'On' | 'Soft-Off' | 'Force-Off';

/** PCS (Power Control Service). */
export interface PowerPort {
  /** POST power-status; ids PCS did not answer for are absent from the map. Empty ids -> empty map. */
  powerStatus(ids: string[]): Promise<Map<string, PowerState>>;
  /** POST transitions; returns the transition ids (one per chunk). Empty ids -> []. */
  transition(operation: PowerOperation, ids: string[], taskDeadlineMinutes?: number): Promise<string[]>;
  /** GET transitions/{id}: progress of one transition (BOS never polls it; for diagnostics and tests). */
  getTransition?(id: string): Promise<TransitionStatus | undefined>;
  /**
   * Disk deploys: next boot from the node's disk, then power-cycle (or power on when off). Returns the
   * nodes it failed for. Only BMC-facing power (standalone, the simulator) can; CSM PCS cannot.
   */
  bootFromDisk?(ids: string[]): Promise<BootFromDiskProblem[]>;
  /**
   * Of `ids`, the nodes whose power is being read and not answered yet (a read queued or in flight, or
   * a power action not settled at the BMC), known without asking. A decision that needs the node's
   * power waits for it rather than act on "not read". Only BMC-facing power has such nodes: PCS's
   * power-status answers every node at once.
   */
  stillReading?(ids: string[]): Set<string>;
}

export interface BootFromDiskProblem {
  id: string;
  error: string;
  /** Trying again may help (unreachable, timeout). */
  transient: boolean;
  /** What the BMC call's failure names (the failure reason when it is given up on); absent: service_unavailable. */
  cause?: PowerUnknownCause;
}

export interface TransitionStatus {
  id: string;
  operation: string;
  /** new, in-progress, completed, aborted, abort-signaled */
  status: string;
  tasks: { xname: string; status: string; error: string }[];
}

export interface BootParameters {
  hosts: string[];
  kernel: string;
  initrd: string;
  params: string;
}

/** BSS (Boot Script Service). */
export interface BootParamsPort {
  /** PUT bootparameters; returns the BSS-Referral-Token header of the response. */
  setBootParameters(p: BootParameters): Promise<{ token: string }>;
  /** GET bootparameters?name=... (one entry per host found). */
  getBootParameters(hosts: string[]): Promise<BootParameters[]>;
}

export interface ConfigPatch {
  enabled?: boolean;
  desiredConfig?: string;
  tags?: Record<string, string>;
  /** send `state: []` (clear applied layers) */
  clearState?: boolean;
}

/** CFS v3 components and configurations. */
export interface ConfigPort {
  /** GET /v3/components (ids in batches of 200, following `next`); no ids = every component. */
  getComponents(ids?: string[]): Promise<ConfigComponent[]>;
  /** PATCH /v3/components {patch, filters:{ids}} in batches of 1000; returns the ids CFS patched. */
  patchComponents(ids: string[], patch: ConfigPatch): Promise<string[]>;
  /** GET /v3/configurations/{name}: true when it exists. */
  configurationExists(name: string): Promise<boolean>;
}

export interface ImageArtifacts {
  kernel: string;
  initrd: string;
  /** Tokens of the image's own boot parameters (application/vnd.cray.image.parameters.boot). */
  bootParameters: string;
  rootfs?: { path: string; etag: string };
  /** x86_64 / aarch64 when known. */
  arch?: string;
}

/** Image manifests (IMS manifest.json over S3 / HTTP). */
export interface ImagesPort {
  /** Read a boot set's manifest path and resolve its artifacts; throws ServiceError('ims') when unreadable. */
  resolve(path: string, etag?: string): Promise<ImageArtifacts>;
}

export interface Adapters {
  inventory: InventoryPort;
  power: PowerPort;
  bootParams: BootParamsPort;
  config: ConfigPort;
  images: ImagesPort;
  /** Applied on every operator tick: read timeouts (seconds) and chunk size from the options. */
  configure(settings: AdapterSettings): void;
  /** Ends what the adapters hold open (standalone: the IPMI shells and their BMC sessions, the kept Redfish connections); at the process's stop. */
  close?(): Promise<void>;
}

export interface AdapterSettings {
  timeouts: { hsm: number; pcs: number; bss: number; cfs: number; ims: number };
  /** 0 = no limit. */
  maxBatchSize: number;
}
