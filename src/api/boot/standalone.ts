/** What the API serves in standalone mode: the boot-script endpoint and node registration. */
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import { NodeRegistry } from '../../adapters/standalone/registry.ts';
import { secretKeyFrom } from '../../adapters/standalone/secrets.ts';
import { bootRoutes } from './routes.ts';

export function standaloneApi(config: Config, db: Db): { bootRoutes?: ReturnType<typeof bootRoutes>; nodeRegistry?: NodeRegistry } {
  if (config.BOOTORCH_ADAPTERS !== 'standalone') return {};
  return {
    bootRoutes: bootRoutes({
      db,
      baseUrl: config.BOOTORCH_BOOT_URL,
      filesDir: config.BOOTORCH_BOOT_FILES,
      tokenTtlSeconds: config.BOOTORCH_BOOT_TOKEN_TTL,
    }),
    nodeRegistry: new NodeRegistry(secretKeyFrom(config)),
  };
}
