/**
 * The S3 side of boot images: IMS manifests and the objects they point to, keyed by `s3://bucket/key`.
 * `addImage` writes a manifest like IMS does (artifacts with type and link.path/etag), a kernel, an
 * initrd, a squashfs rootfs and the image's boot-parameters text. Served over HTTP as /s3/<bucket>/<key>.
 */
import { createHash } from 'node:crypto';

export interface S3Object {
  body: string;
  etag: string;
  contentType: string;
}

export interface SimImage {
  id: string;
  manifest: string;
  kernel: string;
  initrd: string;
  rootfs: string;
  rootfsEtag: string;
  bootParameters: string;
  /** IMS arch: x86_64 or aarch64. */
  arch: string;
}

export interface AddImageOptions {
  /** IMS image id (a UUID); default: the next seeded UUID. */
  id?: string;
  /** Tokens of the image's own boot parameters (default typical compute parameters). */
  kernelParameters?: string;
  arch?: 'x86_64' | 'aarch64';
  /** Leave out the initrd artifact (BOS then warns). */
  noInitrd?: boolean;
}

export const DEFAULT_IMAGE_PARAMETERS =
  'console=ttyS0,115200 bad_page=panic crashkernel=512M hugepagelist=2m-2g intel_iommu=off iommu.passthrough=on numa_interleave_omit=headless oops=panic pageblock_order=14 rd.neednet=1 rd.retry=10 rd.shell split_lock_detect=off systemd.unified_cgroup_hierarchy=1 ip=dhcp quiet spire_join_token=${SPIRE_JOIN_TOKEN}';

const etag = (s: string) => createHash('md5').update(s).digest('hex');

export class ImageStore {
  readonly objects = new Map<string, S3Object>();
  readonly images = new Map<string, SimImage>();

  constructor(private readonly newId: () => string) {}

  put(path: string, body: string, contentType = 'application/octet-stream'): S3Object {
    const o = { body, etag: etag(body), contentType };
    this.objects.set(path, o);
    return o;
  }

  get(path: string): S3Object | undefined {
    return this.objects.get(path);
  }

  addImage(o: AddImageOptions = {}): SimImage {
    const id = o.id ?? this.newId();
    const base = `s3://boot-images/${id}`;
    const arch = o.arch ?? 'x86_64';
    const kernel = this.put(`${base}/kernel`, `kernel ${id}`);
    const initrd = o.noInitrd ? undefined : this.put(`${base}/initrd`, `initrd ${id}`);
    const rootfs = this.put(`${base}/rootfs`, `squashfs ${id}`);
    const params = this.put(`${base}/boot_parameters`, o.kernelParameters ?? DEFAULT_IMAGE_PARAMETERS, 'text/plain');
    const link = (path: string, obj: S3Object) => ({ path, etag: obj.etag, type: 's3' });
    const artifacts = [
      { type: 'application/vnd.cray.image.rootfs.squashfs', link: link(`${base}/rootfs`, rootfs), md5: rootfs.etag },
      { type: 'application/vnd.cray.image.kernel', link: link(`${base}/kernel`, kernel), md5: kernel.etag },
      ...(initrd ? [{ type: 'application/vnd.cray.image.initrd', link: link(`${base}/initrd`, initrd), md5: initrd.etag }] : []),
      { type: 'application/vnd.cray.image.parameters.boot', link: link(`${base}/boot_parameters`, params), md5: params.etag },
    ];
    // `arch` is not in IMS manifests (IMS keeps it on the image record); the simulator adds it so
    // both image adapters can report it without an IMS API.
    const manifest = { version: '1.0', created: '2026-01-01 00:00:00', arch, artifacts };
    this.put(`${base}/manifest.json`, JSON.stringify(manifest), 'application/json');
    const img: SimImage = {
      id,
      manifest: `${base}/manifest.json`,
      kernel: `${base}/kernel`,
      initrd: initrd ? `${base}/initrd` : '',
      rootfs: `${base}/rootfs`,
      rootfsEtag: rootfs.etag,
      bootParameters: params.body,
      arch,
    };
    this.images.set(img.manifest, img);
    return img;
  }
}
