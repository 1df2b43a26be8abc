/**
 * The client image manifests and boot-parameters objects are read with, in http and standalone
 * mode: every URL through the outbound guard (allowed origins, public addresses unless the admin named
 * the origin, answers up to MAX_MANIFEST_BYTES), and the S3 endpoint's credential to its origin alone.
 */
import { DEFAULT_RETRY, ServiceClient, type RetryPolicy, type ServiceEndpoint } from '../http.ts';
import { OutboundGuard } from '../outbound.ts';
import type { OriginList } from '../outbound-policy.ts';
import { MAX_MANIFEST_BYTES } from './manifest.ts';

export interface ImageClientOptions {
  /** The S3 endpoint (http mode): its origin is always allowed, and the only one that gets its token. */
  s3?: ServiceEndpoint;
  /** BOOTORCH_IMAGE_ORIGINS. */
  origins?: OriginList;
  timeoutMs: () => number;
  retry?: RetryPolicy;
}

export function createImageClient(o: ImageClientOptions): ServiceClient {
  const listed = new Set(o.origins?.listed);
  if (o.s3?.url && URL.canParse(o.s3.url)) listed.add(new URL(o.s3.url).origin);
  const guard = new OutboundGuard({
    origins: { listed, anyPublic: o.origins?.anyPublic ?? false },
    caFile: o.s3?.caFile,
    maxBytes: MAX_MANIFEST_BYTES,
  });
  return new ServiceClient('ims', o.s3 ?? { url: '' }, o.timeoutMs, o.retry ?? DEFAULT_RETRY, guard);
}
