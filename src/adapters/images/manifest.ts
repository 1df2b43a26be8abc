/**
 * IMS manifest.json -> boot artifacts (bos-v2-behaviour §4.6): kernel and initrd link paths, the
 * image's boot-parameters object, the squashfs rootfs. Shared by the HTTP and simulated image adapters.
 */
import { z } from 'zod';
import { ServiceError } from '../errors.ts';
import type { ImageArtifacts } from '../ports.ts';

/**
 * A link's path and etag end up in kernel parameters (root=sbps-s3:<path>:<etag>) and boot scripts:
 * one token of printable ASCII, so a manifest cannot add parameters of its own.
 */
const token = z
  .string()
  .max(2048)
  .regex(/^[\x21-\x7e]*$/, 'must be printable ASCII without spaces');

const artifact = z
  .object({
    type: z.string(),
    link: z.object({ path: token, etag: token.optional() }).passthrough(),
  })
  .passthrough();

export const manifestSchema = z
  .object({
    artifacts: z.array(artifact),
    /** Not in real IMS manifests (IMS keeps arch on the image record); the simulator adds it. */
    arch: z.string().optional(),
  })
  .passthrough();

export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** Longest boot-parameters object taken as kernel parameters (Linux's x86 command line is 2 KiB). */
export const MAX_BOOT_PARAMETERS_BYTES = 4096;

export interface ParsedManifest {
  kernel: string;
  initrd: string;
  bootParameters?: { path: string; etag?: string };
  rootfs?: { path: string; etag: string };
  arch?: string;
}

/** Throws an Error with a readable reason when the manifest is unusable (no kernel, bad JSON). */
export function parseManifest(text: string): ParsedManifest {
  if (text.length > MAX_MANIFEST_BYTES) throw new Error(`manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('manifest is not valid JSON');
  }
  const r = manifestSchema.safeParse(json);
  if (!r.success) throw new Error(`manifest has an unexpected shape: ${r.error.issues[0]?.message ?? 'invalid'}`);
  const find = (type: string) => r.data.artifacts.find((a) => a.type === type)?.link;
  const kernel = find('application/vnd.cray.image.kernel');
  if (!kernel) throw new Error('manifest lists no kernel (application/vnd.cray.image.kernel)');
  const params = find('application/vnd.cray.image.parameters.boot');
  const rootfs = find('application/vnd.cray.image.rootfs.squashfs');
  return {
    kernel: kernel.path,
    initrd: find('application/vnd.cray.image.initrd')?.path ?? '',
    bootParameters: params && { path: params.path, etag: params.etag },
    rootfs: rootfs && { path: rootfs.path, etag: rootfs.etag ?? '' },
    arch: r.data.arch,
  };
}

/** Boot-parameters object text -> tokens joined by single spaces. */
export function normaliseParameters(text: string): string {
  return text.split(/\s+/).filter(Boolean).join(' ');
}

/**
 * The boot-parameters object as kernel parameters, or why it is not a kernel command line. It is the
 * only part of a fetched object bootorch passes on whole (into planSession's answer and the nodes'
 * boot parameters), so anything else (an HTML page, binary, a long document) is refused unread.
 */
export function kernelParameters(text: string): string | { error: string } {
  const error = (why: string) => ({ error: `boot parameters object is not a kernel command line (${why})` });
  if (Buffer.byteLength(text) > MAX_BOOT_PARAMETERS_BYTES) return error(`longer than ${MAX_BOOT_PARAMETERS_BYTES} bytes`);
  if (!/^[\x20-\x7e\t\n\r]*$/.test(text)) return error('characters other than printable ASCII');
  return normaliseParameters(text);
}

/**
 * A boot set's artifacts from its manifest, however the objects are read (HTTP/S3 or the simulator):
 * the manifest, then the image's boot parameters object when it lists one. A manifest that does not
 * parse is a ServiceError of IMS that retrying will not fix.
 */
export async function resolveManifest(path: string, read: (path: string) => Promise<string>): Promise<ImageArtifacts> {
  let m: ParsedManifest;
  try {
    m = parseManifest(await read(path));
  } catch (e) {
    if (e instanceof ServiceError) throw e;
    throw new ServiceError('ims', `GET ${path}`, (e as Error).message, undefined, false);
  }
  let bootParameters = '';
  if (m.bootParameters) {
    const p = kernelParameters(await read(m.bootParameters.path));
    if (typeof p !== 'string') throw new ServiceError('ims', `GET ${m.bootParameters.path}`, p.error, undefined, false);
    bootParameters = p;
  }
  return { kernel: m.kernel, initrd: m.initrd, bootParameters, rootfs: m.rootfs, arch: m.arch };
}
