/** ImagesPort over the world's S3 objects; an unknown path is ServiceError('ims', ..., 404). */
import type { SimWorld } from '../../sim/world.ts';
import { ServiceError } from '../errors.ts';
import { EP, type SettingsRef } from '../common.ts';
import type { ImageArtifacts, ImagesPort } from '../ports.ts';
import { resolveManifest } from './manifest.ts';

export class SimImages implements ImagesPort {
  constructor(
    private readonly world: SimWorld,
    private readonly settings: SettingsRef,
  ) {}

  private async read(path: string): Promise<string> {
    await this.world.enter('ims', EP.imsObject, this.settings.timeoutMs('ims'));
    const o = this.world.images.get(path);
    if (!o) throw new ServiceError('ims', `GET ${path}`, 'NoSuchKey: The specified key does not exist.', 404, false);
    return o.body;
  }

  resolve(path: string): Promise<ImageArtifacts> {
    return resolveManifest(path, (p) => this.read(p));
  }
}
