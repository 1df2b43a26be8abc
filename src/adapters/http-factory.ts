/** The HTTP adapters: one ServiceClient per service, sharing the settings that configure() sets. */
import { HttpBootParams } from './bootparams/http.ts';
import { SettingsRef } from './common.ts';
import { HttpConfig } from './config/http.ts';
import { DEFAULT_RETRY, ServiceClient, type RetryPolicy, type ServiceEndpoint } from './http.ts';

export type { ServiceEndpoint };
import { HttpImages } from './images/http.ts';
import { createImageClient } from './images/client.ts';
import type { OriginList } from './outbound-policy.ts';
import { HttpInventory } from './inventory/http.ts';
import type { Adapters } from './ports.ts';
import { HttpPower } from './power/http.ts';

export interface HttpAdaptersConfig {
  hsm: ServiceEndpoint;
  pcs: ServiceEndpoint;
  bss: ServiceEndpoint;
  cfs: ServiceEndpoint;
  /** S3 endpoint that `s3://bucket/key` maps to as `<url>/bucket/key`; its origin is an allowed image origin. */
  ims: ServiceEndpoint;
  /** Origins image manifests may be read from besides the S3 endpoint's (BOOTORCH_IMAGE_ORIGINS). */
  imageOrigins?: OriginList;
  /** Retries on 5xx and connection errors (default 3, backoff 200 ms doubling to 2 s). */
  retry?: RetryPolicy;
}

export function createHttpAdapters(cfg: HttpAdaptersConfig): Adapters & { close(): Promise<void> } {
  const settings = new SettingsRef();
  const retry = cfg.retry ?? DEFAULT_RETRY;
  const client = (s: 'hsm' | 'pcs' | 'bss' | 'cfs') => new ServiceClient(s, cfg[s], () => settings.timeoutMs(s), retry);
  // Image paths are written by operators: that client fetches through the outbound guard.
  const ims = createImageClient({ s3: cfg.ims, origins: cfg.imageOrigins, timeoutMs: () => settings.timeoutMs('ims'), retry });
  const clients = { hsm: client('hsm'), pcs: client('pcs'), bss: client('bss'), cfs: client('cfs'), ims };
  return {
    inventory: new HttpInventory(clients.hsm, settings),
    power: new HttpPower(clients.pcs, settings),
    bootParams: new HttpBootParams(clients.bss),
    config: new HttpConfig(clients.cfs),
    images: new HttpImages(clients.ims, cfg.ims.url),
    configure: (s) => settings.set(s),
    close: async () => {
      await Promise.all(Object.values(clients).map((c) => c.close()));
    },
  };
}
