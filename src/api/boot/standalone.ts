/** What the API serves in standalone mode: the boot-script endpoint, node registration and discovery. */
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { NodeDiscovery } from '../../adapters/standalone/discovery.ts';
import { NodeRegistry } from '../../adapters/standalone/registry.ts';
import { secretKeyFrom } from '../../adapters/standalone/secrets.ts';
import { bootRoutes, type BootRouter } from './routes.ts';

export function standaloneApi(config: Config, db: Db, log?: Logger): { bootRoutes?: BootRouter; nodeRegistry?: NodeRegistry } {
  if (config.BOOTORCH_ADAPTERS !== 'standalone') return {};
  return {
    bootRoutes: bootRoutes({
      db,
      baseUrl: config.BOOTORCH_BOOT_URL,
      filesDir: config.BOOTORCH_BOOT_FILES,
      tokenTtlSeconds: config.BOOTORCH_BOOT_TOKEN_TTL,
      ticketTtlSeconds: config.BOOTORCH_BOOT_TICKET_TTL,
      perSource: { perSecond: config.BOOTORCH_BOOT_RATE_PER_SOURCE, burst: config.BOOTORCH_BOOT_BURST_PER_SOURCE },
      total: { perSecond: config.BOOTORCH_BOOT_RATE_TOTAL, burst: config.BOOTORCH_BOOT_BURST_TOTAL },
      trustProxy: config.BOOTORCH_TRUST_PROXY,
      warn: (message, data) => log?.warn(data, message),
      secretKey: secretKeyFrom(config),
    }),
    nodeRegistry: new NodeRegistry(
      secretKeyFrom(config),
      new NodeDiscovery({
        secretKey: secretKeyFrom(config),
        timeoutMs: config.BOOTORCH_BMC_TIMEOUT * 1000,
        caFile: config.BOOTORCH_BMC_CA_FILE,
        keepConnections: config.BOOTORCH_BMC_KEEP_CONNECTIONS,
        guard: { concurrency: config.BOOTORCH_BMC_CONCURRENCY },
      }),
    ),
  };
}
