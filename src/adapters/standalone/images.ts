/**
 * ImagesPort for a site without IMS/S3: a boot set's path is an IMS-style manifest.json either at an
 * http(s) URL or in the local folder bootorch serves (BOOTORCH_BOOT_FILES), named relative to it.
 * The manifest's kernel and initrd links may be URLs or paths in that folder; the boot-script
 * endpoint turns folder paths into URLs under /boot/v1/files/.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ServiceError } from '../errors.ts';
import { MAX_MANIFEST_BYTES, resolveManifest } from '../images/manifest.ts';
import type { ImageArtifacts, ImagesPort } from '../ports.ts';

export class StandaloneImages implements ImagesPort {
  constructor(
    private readonly filesDir?: string,
    private readonly timeoutMs = 20_000,
  ) {}

  resolve(p: string): Promise<ImageArtifacts> {
    return resolveManifest(p, (q) => this.read(q));
  }

  private async read(p: string): Promise<string> {
    const endpoint = `GET ${p}`;
    if (/^https?:\/\//.test(p)) {
      let res: Response;
      try {
        res = await fetch(p, { signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (e) {
        throw new ServiceError('ims', endpoint, `cannot read: ${(e as Error).message}`);
      }
      const text = await res.text();
      if (!res.ok) throw new ServiceError('ims', endpoint, text.slice(0, 200) || res.statusText, res.status, res.status >= 500);
      return text;
    }
    const file = localFile(this.filesDir, p);
    if (!file) throw new ServiceError('ims', endpoint, 'not an http(s) URL nor a path in BOOTORCH_BOOT_FILES', undefined, false);
    try {
      return (await readFile(file, 'utf8')).slice(0, MAX_MANIFEST_BYTES + 1);
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
