/** HTTP adapters (filled in by the "Real service clients" milestone). */
import type { Adapters } from './ports.ts';

export interface ServiceEndpoint {
  /** Base URL without the service's version prefix (e.g. http://cray-smd, https://gw/apis/smd). */
  url: string;
  /** Bearer token, or a file holding it (re-read on every request). */
  token?: string;
  tokenFile?: string;
  /** PEM CA bundle to trust. */
  caFile?: string;
}

export interface HttpAdaptersConfig {
  hsm: ServiceEndpoint;
  pcs: ServiceEndpoint;
  bss: ServiceEndpoint;
  cfs: ServiceEndpoint;
  /** S3 endpoint that `s3://bucket/key` maps to as `<url>/bucket/key`. */
  ims: ServiceEndpoint;
}

export function createHttpAdapters(_cfg: HttpAdaptersConfig): Adapters {
  throw new Error('HTTP adapters are not implemented yet');
}
