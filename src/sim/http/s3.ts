/** S3 objects (image manifests, boot-parameter files) path-style: GET /s3/<bucket>/<key>. */
import { problem, type Route } from './router.ts';

export const s3Routes: Route[] = [
  {
    method: 'GET',
    path: '/s3/{bucket}/{key+}',
    service: 'ims',
    handler: ({ world, params }) => {
      const o = world.images.get(`s3://${params.bucket}/${params.key}`);
      if (!o) return problem(404, 'NoSuchKey: The specified key does not exist.');
      return { status: 200, text: o.body, contentType: o.contentType, headers: { etag: `"${o.etag}"` } };
    },
  },
];
