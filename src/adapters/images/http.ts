/**
 * Image manifests over HTTP(S): `s3://bucket/key` maps to `<S3 endpoint>/bucket/key` (path-style, as
 * Ceph RGW serves it); http(s) paths are read as they are, from allowed origins only (the client is
 * built with the outbound guard, src/adapters/outbound.ts; the CSM token goes to the S3 endpoint's
 * origin alone). Reads the boot-parameters object the manifest lists. A missing object is
 * ServiceError('ims', ..., 404), not transient.
 */
import { z } from 'zod';
import { ServiceError } from '../errors.ts';
import type { ServiceClient } from '../http.ts';
import type { ImageArtifacts, ImagesPort } from '../ports.ts';
import { resolveManifest } from './manifest.ts';

export class HttpImages implements ImagesPort {
  constructor(
    private readonly http: ServiceClient,
    private readonly s3Url: string,
  ) {}

  /** The HTTP URL of an s3:// or http(s):// path. */
  urlOf(path: string): string {
    if (/^https?:\/\//.test(path)) return path;
    const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(path);
    if (!m) throw new ServiceError('ims', `GET ${path}`, 'not an s3:// or http(s):// path', undefined, false);
    if (!this.s3Url) throw new ServiceError('ims', `GET ${path}`, 'no S3 endpoint URL configured (S3_URL)', undefined, false);
    return `${this.s3Url.replace(/\/+$/, '')}/${m[1]}/${m[2]!.split('/').map(encodeURIComponent).join('/')}`;
  }

  private async read(path: string): Promise<string> {
    const r = await this.http.request({ endpoint: `GET ${path}`, method: 'GET', path: this.urlOf(path), text: true, schema: z.string() });
    return r.data;
  }

  resolve(path: string): Promise<ImageArtifacts> {
    return resolveManifest(path, (p) => this.read(p));
  }
}
