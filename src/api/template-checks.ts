/**
 * The async half of BOS's boot set validation (reference §2 "POST /v2/sessions" step 6): read each
 * boot set's image manifest. Unreadable or kernel-less → error; no initrd → warning; image arch not
 * the boot set's → error (X86/Unknown need x86_64, ARM aarch64, Other is not checked).
 * A rescue reads each boot set's rescue image instead (its rescue_image, else the option
 * default_rescue_image; errors name rescueImage). Skipped for shutdowns and unrescues, and when the
 * server was started without an images port.
 */
import type { ImagesPort, ImageArtifacts } from '../adapters/ports.ts';
import { bootsTemplateImage, rescueImageOf, type SessionOperationName, type TemplateRecord } from '../domain/templates.ts';
import type { Issue } from '../domain/validation.ts';

const IMAGE_ARCH: Record<string, string | undefined> = { X86: 'x86_64', Unknown: 'x86_64', ARM: 'aarch64' };

export async function checkArtifacts(
  images: ImagesPort | undefined,
  t: Pick<TemplateRecord, 'bootSets'>,
  operation: SessionOperationName,
  defaultRescueImage = '',
) {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const rescue = operation === 'rescue';
  if (!images || !(rescue || bootsTemplateImage(operation))) return { errors, warnings };
  const cache = new Map<string, Promise<ImageArtifacts>>();
  await Promise.all(
    Object.entries(t.bootSets)
      .filter(([, b]) => (rescue ? rescueImageOf(b, defaultRescueImage) !== '' : b.type === 's3'))
      .map(async ([name, b]) => {
        const field = `bootSets.${name}.${rescue ? 'rescueImage' : 'path'}`;
        const at = `bootSets.${name}`;
        const [path, etag] = rescue ? [rescueImageOf(b, defaultRescueImage), undefined] : [b.path, b.etag];
        const key = `${path}\u0000${etag ?? ''}`;
        if (!cache.has(key)) cache.set(key, images.resolve(path, etag));
        let a: ImageArtifacts;
        try {
          a = await cache.get(key)!;
        } catch (e) {
          errors.push({ field, message: `cannot read the image manifest: ${(e as Error).message}` });
          return;
        }
        if (!a.kernel) errors.push({ field, message: 'the image manifest names no kernel' });
        if (!a.initrd) warnings.push({ field, message: 'the image manifest names no initrd' });
        const want = IMAGE_ARCH[b.arch];
        if (want && a.arch && a.arch !== want) {
          errors.push({ field: `${at}.arch`, message: `boot set arch ${b.arch} needs an ${want} image; this image is ${a.arch}` });
        }
      }),
  );
  return { errors, warnings };
}
