/**
 * The async half of BOS's boot set validation (reference §2 "POST /v2/sessions" step 6): read each
 * boot set's image manifest. Unreadable or kernel-less → error; no initrd → warning; image arch not
 * the boot set's → error (X86/Unknown need x86_64, ARM aarch64, Other is not checked).
 * Skipped for shutdowns, and when the server was started without an images port.
 */
import type { ImagesPort, ImageArtifacts } from '../adapters/ports.ts';
import type { SessionOperationName, TemplateRecord } from '../domain/templates.ts';
import type { Issue } from '../domain/validation.ts';

const IMAGE_ARCH: Record<string, string | undefined> = { X86: 'x86_64', Unknown: 'x86_64', ARM: 'aarch64' };

export async function checkArtifacts(images: ImagesPort | undefined, t: Pick<TemplateRecord, 'bootSets'>, operation: SessionOperationName) {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  if (!images || operation === 'shutdown') return { errors, warnings };
  const cache = new Map<string, Promise<ImageArtifacts>>();
  await Promise.all(
    Object.entries(t.bootSets)
      .filter(([, b]) => b.type === 's3')
      .map(async ([name, b]) => {
        const at = `bootSets.${name}`;
        const key = `${b.path}\u0000${b.etag ?? ''}`;
        if (!cache.has(key)) cache.set(key, images.resolve(b.path, b.etag));
        let a: ImageArtifacts;
        try {
          a = await cache.get(key)!;
        } catch (e) {
          errors.push({ field: `${at}.path`, message: `cannot read the image manifest: ${(e as Error).message}` });
          return;
        }
        if (!a.kernel) errors.push({ field: `${at}.path`, message: 'the image manifest names no kernel' });
        if (!a.initrd) warnings.push({ field: `${at}.path`, message: 'the image manifest names no initrd' });
        const want = IMAGE_ARCH[b.arch];
        if (want && a.arch && a.arch !== want) {
          errors.push({ field: `${at}.arch`, message: `boot set arch ${b.arch} needs an ${want} image; this image is ${a.arch}` });
        }
      }),
  );
  return { errors, warnings };
}
