/** Image manifests over HTTP from the simulator's S3 face (no OpenAPI contract: S3 GET object). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/adapters/errors.ts';
import { HttpImages } from '../../src/adapters/images/http.ts';
import { startRig, type Rig } from './harness.ts';

let rig: Rig;
beforeAll(async () => {
  rig = await startRig();
});
afterAll(() => rig.close());

describe('image manifests over HTTP', () => {
  it('resolves s3:// manifests through the S3 endpoint, with the boot parameters object', async () => {
    const img = rig.world.defaultImage;
    const got = await rig.adapters.images.resolve(img.manifest);
    expect(got).toEqual({
      kernel: img.kernel,
      initrd: img.initrd,
      bootParameters: img.bootParameters,
      rootfs: { path: img.rootfs, etag: img.rootfsEtag },
      arch: 'x86_64',
    });
    const paths = rig.exchanges.filter((x) => x.service === 'ims').map((x) => x.path);
    expect(paths).toEqual([`/s3/boot-images/${img.id}/manifest.json`, `/s3/boot-images/${img.id}/boot_parameters`]);
  });

  it('reads an http(s) manifest path as it is', async () => {
    const img = rig.world.images.addImage({ kernelParameters: 'quiet', noInitrd: true });
    const url = `${rig.server.urls.s3}/boot-images/${img.id}/manifest.json`;
    expect(await rig.adapters.images.resolve(url)).toMatchObject({ kernel: img.kernel, initrd: '', bootParameters: 'quiet' });
  });

  it('an unknown object is a non-transient ims 404; a broken manifest names the problem', async () => {
    const e = await rig.adapters.images.resolve('s3://boot-images/nope/manifest.json').catch((x) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect(e).toMatchObject({ service: 'ims', status: 404, transient: false, endpoint: 'GET s3://boot-images/nope/manifest.json' });
    rig.world.images.put('s3://boot-images/broken/manifest.json', '{"artifacts": []}', 'application/json');
    const b = await rig.adapters.images.resolve('s3://boot-images/broken/manifest.json').catch((x) => x);
    expect(b).toMatchObject({ service: 'ims', transient: false });
    expect(b.detail).toMatch(/no kernel/);
  });

  it('maps s3:// paths path-style and needs an S3 endpoint', () => {
    const h = new HttpImages({} as never, 'https://rgw.example/');
    expect(h.urlOf('s3://boot-images/a b/manifest.json')).toBe('https://rgw.example/boot-images/a%20b/manifest.json');
    expect(() => new HttpImages({} as never, '').urlOf('s3://b/k')).toThrow(/S3_URL/);
    expect(() => h.urlOf('ftp://x')).toThrow(/not an s3/);
  });
});
