/**
 * The standalone adapters (BOOTORCH_ADAPTERS=standalone): bootorch's own inventory, power over each
 * node's BMC (IPMI through ipmitool, or Redfish), boot parameters kept for the boot-script endpoint,
 * configuration hooks, and image manifests from URLs or the served folder.
 */
import type { Db } from '../../db/client.ts';
import { SettingsRef } from '../common.ts';
import type { Adapters } from '../ports.ts';
import { StandaloneBootParams } from './boot-params.ts';
import { StandaloneConfig, type StandaloneConfigOptions } from './config.ts';
import { createImageClient } from '../images/client.ts';
import type { OriginList } from '../outbound-policy.ts';
import { StandaloneImages } from './images.ts';
import { StandaloneInventory } from './inventory.ts';
import { IpmiTool, type IpmiMode } from './ipmi.ts';
import { StandalonePower, type StandalonePowerOptions } from './power.ts';
import { BmcGuard, type BmcGuardOptions } from './bmc-guard.ts';
import { RedfishClient } from './redfish.ts';

export interface StandaloneAdaptersConfig {
  db: Db;
  secretKey?: Buffer;
  /** ipmitool binary (default `ipmitool`). */
  ipmitool?: string;
  /** IPMI through a long-lived `ipmitool shell` per BMC (default) or a process per call. */
  ipmiMode?: IpmiMode;
  /** Shell mode: an idle shell is closed after this long, ms (default 30 s). */
  ipmiShellIdleMs?: number;
  /** Shell mode: shells open at most (default 128). */
  ipmiShells?: number;
  /** Deadline of one BMC call (default 15 s). */
  bmcTimeoutMs?: number;
  /** Limits, circuits and backoff of the BMC calls (bmc-guard.ts). */
  bmcGuard?: BmcGuardOptions;
  /** How long power-status waits for the BMCs, ms (default 2000). */
  bmcPassWaitMs?: number;
  /** Folder of configuration hooks. */
  hooksDir?: string;
  /** Folder bootorch serves at /boot/v1/files (manifests and artifacts). */
  filesDir?: string;
  /** Origins image manifests may be read from over HTTP (BOOTORCH_IMAGE_ORIGINS; default none). */
  imageOrigins?: OriginList;
  onTaskFailed?: StandalonePowerOptions['onTaskFailed'];
  onHookDone?: StandaloneConfigOptions['onHookDone'];
  onError?: StandaloneConfigOptions['onError'];
  /** Run configuration hooks in this process (default true; the API role passes false). */
  runHooks?: boolean;
  /** PEM CA bundle for Redfish BMCs' certificates. */
  bmcCaFile?: string;
  /** Idle Redfish connections kept at most (default: half the open-file limit; connections.ts). */
  bmcKeepConnections?: number;
  /** A node's boot window after power-on, seconds (BOOTORCH_BOOT_WINDOW; default 1800). */
  bootWindowSeconds?: number;
}

/** The BMC access the power calls use: the worker's console capture reads SerialConsole through the same client and guard. */
export interface BmcAccess {
  redfish: RedfishClient;
  guard: BmcGuard;
}

export type StandaloneAdapters = Adapters & { power: StandalonePower; config: StandaloneConfig; bmcs: BmcAccess };

export function createStandaloneAdapters(c: StandaloneAdaptersConfig): StandaloneAdapters {
  const settings = new SettingsRef();
  const timeoutMs = c.bmcTimeoutMs ?? 15_000;
  const ipmi = new IpmiTool({ binary: c.ipmitool, timeoutMs, mode: c.ipmiMode, shellIdleMs: c.ipmiShellIdleMs, maxShells: c.ipmiShells });
  const redfish = new RedfishClient({ timeoutMs, caFile: c.bmcCaFile, keepConnections: c.bmcKeepConnections });
  const guard = new BmcGuard(c.bmcGuard);
  return {
    inventory: new StandaloneInventory(c.db),
    power: new StandalonePower(c.db, {
      drivers: {
        ipmi,
        redfish,
      },
      secretKey: c.secretKey,
      guard,
      passWaitMs: c.bmcPassWaitMs,
      onTaskFailed: c.onTaskFailed,
    }),
    bootParams: new StandaloneBootParams(c.db, { windowSeconds: c.bootWindowSeconds }),
    config: new StandaloneConfig(c.db, { hooksDir: c.hooksDir, onHookDone: c.onHookDone, onError: c.onError, runHooks: c.runHooks }),
    images: new StandaloneImages(createImageClient({ origins: c.imageOrigins, timeoutMs: () => settings.timeoutMs('ims') }), c.filesDir),
    configure: (s) => settings.set(s),
    bmcs: { redfish, guard },
    // The IPMI shells and the Redfish connections kept to each BMC (up to a minute idle).
    close: async () => {
      await Promise.all([ipmi.close(), redfish.close()]);
    },
  };
}
