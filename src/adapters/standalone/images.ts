/**
 * ImagesPort for a site without IMS/S3: a boot set's path is an IMS-style manifest.json either at an
 * http(s) URL or in the local folder bootorch serves (BOOTORCH_BOOT_FILES), named relative to it.
 * The manifest's kernel and initrd links may be URLs or paths in that folder; the boot-script
 * endpoint turns folder paths into URLs under /boot/v1/files/. URLs are read without a credential,
 * from the origins BOOTORCH_IMAGE_ORIGINS allows (the client's outbound guard, src/adapters/outbound.ts).
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ServiceError } from '../errors.ts';
import type { ServiceClient } from '../http.ts';
import { MAX_MANIFEST_BYTES, resolveManifest } from '../images/manifest.ts';
import type { ImageArtifacts, ImagesPort } from '../ports.ts';

export class StandaloneImages implements ImagesPort {
  /** `http` is a client with no base URL and no token, built with the outbound guard. */
  constructor(
    private readonly http: ServiceClient,
    private readonly filesDir?: string,
  ) {}

  resolve(p: string): Promise<ImageArtifacts> {
    return resolveManifest(p, (q) => this.read(q));
  }

  private async read(p: string): Promise<string> {
    const endpoint = `GET ${p}`;
    if (/^https?:\/\//i.test(p))
      return (await this.http.request({ endpoint, method: 'GET', path: p, text: true, schema: z.string() })).data;
    const file = localFile(this.filesDir, p);
    if (!file) throw new ServiceError('ims', endpoint, 'not an http(s) URL nor a path in BOOTORCH_BOOT_FILES', undefined, false);
    try {
      // Up to one byte past the limit (`end` is inclusive), so parseManifest can say it is too large
      // without the whole file in memory.
      const chunks: Buffer[] = [];
      for await (const c of createReadStream(file, { end: MAX_MANIFEST_BYTES })) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    } catch (e) {
      throw new ServiceError(
        'ims',
        endpoint,
        `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        404,
        false,
      );
    }
  }
}

/** A path inside `dir` (undefined for absolute paths, `..` escapes, or no folder configured). */
export function localFile(dir: string | undefined, p: string): string | undefined {
  if (!dir || !p || path.isAbsolute(p) || /^[a-z][a-z0-9+.-]*:/i.test(p)) return undefined;
  const root = path.resolve(dir);
  const file = path.resolve(root, p);
  return file.startsWith(root + path.sep) ? file : undefined;
}
