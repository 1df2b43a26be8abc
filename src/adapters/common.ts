/**
 * Pieces every adapter shares: endpoint names (so the HTTP clients, the in-process simulators and
 * the simulator's HTTP server count and report calls under the same names), chunking, and defaults.
 */
import type { AdapterSettings } from './ports.ts';

export const EP = {
  hsmComponents: 'GET /hsm/v2/State/Components',
  hsmQuery: 'POST /hsm/v2/State/Components/Query',
  hsmGroups: 'GET /hsm/v2/groups',
  hsmPartitions: 'GET /hsm/v2/partitions',
  hsmLocks: 'GET /hsm/v2/locks/status',
  pcsTransitions: 'POST /transitions',
  pcsTransition: 'GET /transitions/{transitionID}',
  pcsPowerStatus: 'POST /power-status',
  bssPut: 'PUT /boot/v1/bootparameters',
  bssGet: 'GET /boot/v1/bootparameters',
  cfsComponents: 'GET /v3/components',
  cfsPatch: 'PATCH /v3/components',
  cfsConfiguration: 'GET /v3/configurations/{configuration_id}',
  imsObject: 'GET /s3/{bucket}/{key+}',
} as const;

/** BOS's fixed CFS batch sizes (csm-services §1.4): ids per GET (URL length), ids per PATCH. */
export const CFS_GET_BATCH = 200;
export const CFS_PATCH_BATCH = 1000;
/**
 * CFS GETs of one call in flight at once: a status page of 2,800 ids is 14 GETs of 200, one after
 * another 0.4-0.95 s on a loaded bench machine. CFS serves them in parallel (uwsgi threads=16, 2-10
 * replicas; csm-services §5.2).
 */
export const CFS_GET_CONCURRENCY = 4;

export const DEFAULT_SETTINGS: AdapterSettings = {
  timeouts: { hsm: 20, pcs: 20, bss: 20, cfs: 20, ims: 20 },
  maxBatchSize: 2800,
};

export { chunks } from '../domain/lists.ts';

/** A settings holder shared by one set of adapters; `configure()` replaces it on every operator tick. */
export class SettingsRef {
  current: AdapterSettings = structuredClone(DEFAULT_SETTINGS);

  set(s: AdapterSettings): void {
    this.current = structuredClone(s);
  }

  timeoutMs(service: keyof AdapterSettings['timeouts']): number {
    return this.current.timeouts[service] * 1000;
  }
}
