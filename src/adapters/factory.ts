/**
 * The one place that picks real or simulated adapters (style habit 5). `BOOTORCH_ADAPTERS=sim` runs
 * against an in-process SimWorld (given, or built from SIM_NODES / SIM_SEED); `http` talks to the
 * CSM services, or to `bootorch sim`, at the configured base URLs.
 */
import type { Config } from '../config.ts';
import { SimWorld } from '../sim/world.ts';
import { SimBootParams } from './bootparams/sim.ts';
import { SettingsRef } from './common.ts';
import { SimConfig } from './config/sim.ts';
import { SimImages } from './images/sim.ts';
import { SimInventory } from './inventory/sim.ts';
import type { Adapters } from './ports.ts';
import { SimPower } from './power/sim.ts';
import { createHttpAdapters, type HttpAdaptersConfig } from './http-factory.ts';
import { instrumentAdapters } from '../observability/ports.ts';
import { createStandaloneAdapters, type BmcAccess } from './standalone/factory.ts';
import { secretKeyFrom } from './standalone/secrets.ts';
import type { Db } from '../db/client.ts';
import type { Logger } from 'pino';

export { createHttpAdapters, type HttpAdaptersConfig };

/** Adapters over a simulated world; `world` is handed back so callers can close it and watch it. */
export function createSimAdapters(world: SimWorld): Adapters & { world: SimWorld } {
  const settings = new SettingsRef();
  return {
    world,
    inventory: new SimInventory(world, settings),
    power: new SimPower(world, settings),
    bootParams: new SimBootParams(world, settings),
    config: new SimConfig(world, settings),
    images: new SimImages(world, settings),
    configure: (s) => settings.set(s),
  };
}

/** HTTP settings from the environment (CSM_TOKEN/_FILE and CSM_CA_FILE apply to every service). */
export function httpConfigFrom(config: Config): HttpAdaptersConfig {
  const missing = (['HSM_URL', 'PCS_URL', 'BSS_URL', 'CFS_URL'] as const).filter((k) => !config[k]);
  if (missing.length) throw new Error(`BOOTORCH_ADAPTERS=http needs ${missing.join(', ')}`);
  const auth = { token: config.CSM_TOKEN, tokenFile: config.CSM_TOKEN_FILE, caFile: config.CSM_CA_FILE };
  const s3 = config.S3_URL;
  return {
    hsm: { url: config.HSM_URL!, ...auth },
    pcs: { url: config.PCS_URL!, ...auth },
    bss: { url: config.BSS_URL!, ...auth },
    cfs: { url: config.CFS_URL!, ...auth },
    ims: { url: s3 ?? '', ...auth },
    imageOrigins: config.BOOTORCH_IMAGE_ORIGINS,
  };
}

/**
 * By BOOTORCH_ADAPTERS: `sim` uses `world` or builds one (SIM_NODES, SIM_SEED; the caller owns it via
 * the returned `world` and must close it); `http` builds the HTTP clients; `standalone` needs `db`.
 * Every backend is measured (outside-call metrics and spans); createSimAdapters alone is not (tests,
 * the dev role wraps it).
 */
export function createAdapters(
  config: Config,
  world?: SimWorld,
  deps: { db?: Db; runHooks?: boolean; logger?: Logger } = {},
): Adapters & { world?: SimWorld; bmcs?: BmcAccess } {
  // Every outside call measured at its port (observability/ports.ts), whichever backend is picked here.
  if (config.BOOTORCH_ADAPTERS === 'http') return instrumentAdapters(createHttpAdapters(httpConfigFrom(config)), deps.logger);
  if (config.BOOTORCH_ADAPTERS === 'standalone') {
    if (!deps.db) throw new Error('BOOTORCH_ADAPTERS=standalone needs the database');
    return instrumentAdapters(
      createStandaloneAdapters({
        db: deps.db,
        secretKey: secretKeyFrom(config),
        ipmitool: config.BOOTORCH_IPMITOOL,
        ipmiMode: config.BOOTORCH_IPMI_MODE,
        ipmiShellIdleMs: config.BOOTORCH_IPMI_SHELL_IDLE * 1000,
        ipmiShells: config.BOOTORCH_IPMI_SHELLS,
        bmcTimeoutMs: config.BOOTORCH_BMC_TIMEOUT * 1000,
        bmcGuard: {
          concurrency: config.BOOTORCH_BMC_CONCURRENCY,
          failuresToOpen: config.BOOTORCH_BMC_CIRCUIT_FAILURES,
          maxOpenMs: config.BOOTORCH_BMC_CIRCUIT_MAX_OPEN * 1000,
        },
        bmcPassWaitMs: config.BOOTORCH_BMC_PASS_WAIT * 1000,
        hooksDir: config.BOOTORCH_CONFIG_HOOKS,
        filesDir: config.BOOTORCH_BOOT_FILES,
        imageOrigins: config.BOOTORCH_IMAGE_ORIGINS,
        runHooks: deps.runHooks,
        bmcCaFile: config.BOOTORCH_BMC_CA_FILE,
        bmcKeepConnections: config.BOOTORCH_BMC_KEEP_CONNECTIONS,
        bootWindowSeconds: config.BOOTORCH_BOOT_WINDOW,
        onTaskFailed: (id, op, error) =>
          deps.logger?.warn({ xname: id, operation: op, err: error }, `power ${op} of ${id} failed: ${error}`),
        onHookDone: (name, ids, code) =>
          deps.logger?.warn(
            { hook: name, nodes: ids.length, exitCode: code },
            `configuration hook ${name} on ${ids.length} nodes exited ${code}`,
          ),
        onError: (e) => deps.logger?.warn({ err: (e as Error).message }, `configuration hooks: ${(e as Error).message}`),
      }),
      deps.logger,
    );
  }
  return instrumentAdapters(createSimAdapters(world ?? new SimWorld({ nodes: config.SIM_NODES, seed: config.SIM_SEED })), deps.logger);
}
