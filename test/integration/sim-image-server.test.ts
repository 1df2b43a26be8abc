/**
 * The simulator's image server (src/sim/image-server.ts): the bytes as added, 404 naming the path, and
 * the modelled network: a download never outruns its link, downloads together never outrun the uplink
 * (lower bounds only: a busy machine can only make them slower).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startImageServer, type ImageServer } from '../../src/sim/image-server.ts';

let server: ImageServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sha = (b: Buffer | ArrayBuffer) =>
  createHash('sha256')
    .update(Buffer.from(b as ArrayBuffer))
    .digest('hex');
const timed = async (url: string) => {
  const t0 = performance.now();
  const body = await (await fetch(url)).arrayBuffer();
  return { ms: performance.now() - t0, body };
};

describe('sim image server', () => {
  it('serves the bytes added, and 404 for an unknown image', async () => {
    server = await startImageServer({ nodeMbps: 0, totalMbps: 0 });
    const img = randomBytes(300_000);
    server.add('disk.img', img);
    const { body } = await timed(server.url('disk.img'));
    expect(sha(body)).toBe(sha(img));
    const missing = await fetch(server.url('nope.img'));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('/images/nope.img');
    expect(server.counts()).toMatchObject({ started: 1, finished: 1, bytes: img.length, peak: 1 });
  });

  it('a download takes at least size / its link; four together at least 4 × size / the uplink', async () => {
    // 1 MB at 16 Mbit/s per node: >= 0.5 s alone. Uplink 32 Mbit/s: four of them >= 1 s in all.
    server = await startImageServer({ nodeMbps: 16, totalMbps: 32, chunkBytes: 16 * 1024 });
    const img = randomBytes(1_000_000);
    server.add('disk.img', img);
    const one = await timed(server.url('disk.img'));
    expect(one.ms).toBeGreaterThanOrEqual(480);
    const t0 = performance.now();
    const four = await Promise.all(Array.from({ length: 4 }, () => timed(server!.url('disk.img'))));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(980);
    for (const f of four) expect(sha(f.body)).toBe(sha(img));
    expect(server.counts()).toMatchObject({ started: 5, finished: 5, bytes: 5 * img.length, peak: 4 });
  });
});
