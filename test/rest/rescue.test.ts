/**
 * The REST extension for rescue (docs/rescue.md): `POST /bootorch/v1/rescue` and `/unrescue` (also
 * under /apis/bos) create the same sessions createSession does, answered as BOS answers a session;
 * a template's boot set takes `rescue_image` over BOS's template routes and gives it back; BOS's own
 * `/v2/sessions` keeps BOS's operations; BOS's component writes leave a rescued node rescued. Real HTTP against the API over the simulated cluster.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { startClusterApi, type ClusterApi } from '../helpers/cluster-api.ts';
import { testAuth } from '../helpers/auth.ts';

let c: Cluster;
let h: ClusterApi;
let base = '';
let auth: Record<string, string>;
let ids: string[] = [];

async function req(method: string, path: string, body?: unknown, headers = auth) {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

const rescueKernel = async (id: string) => (await c.components([id]))[0].rescue_kernel as string;

beforeAll(async () => {
  c = await startCluster({ world: { nodes: 4, initial: { booted: true } } });
  h = await startClusterApi(c);
  base = new URL(h.api.url).origin;
  const a = await testAuth(c.db.db);
  auth = a.bearer(a.adminToken);
  ids = c.world.ids().sort();
  const image = c.world.images.addImage({ kernelParameters: 'console=ttyS0 rescue' });
  const bootSet = { path: c.world.defaultImage.manifest, type: 's3', node_list: ids };
  const put = await req('PUT', '/apis/bos/v2/sessiontemplates/compute', {
    boot_sets: { compute: { ...bootSet, rescue_image: image.manifest } },
  });
  expect(put.status).toBe(200);
  expect(put.body.boot_sets.compute.rescue_image).toBe(image.manifest);
  expect((await req('PUT', '/apis/bos/v2/sessiontemplates/plain', { boot_sets: { compute: bootSet } })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await h?.api.close();
  await c?.close();
});

describe('REST: rescue and unrescue', { timeout: 120_000 }, () => {
  test('POST /bootorch/v1/rescue and /unrescue create the sessions, answered as BOS answers a session', async () => {
    const id = ids[0]!;
    const r = await req('POST', '/apis/bos/bootorch/v1/rescue', { template_name: 'compute', limit: id, name: 'rest-rescue' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'rest-rescue', operation: 'rescue', template_name: 'compute', limit: id, stage: false });
    expect(r.body.status.status).toBe('pending');
    expect((await c.waitForSession('rest-rescue', 60_000)).error).toBeNull();
    expect(await rescueKernel(id)).toMatch(/\/kernel$/);
    const status = await req('GET', '/apis/bos/v2/sessions/rest-rescue/status');
    expect(status.body).toMatchObject({ status: 'complete', percent_successful: 100 });

    // BOS's component writes leave the rescue image to the rescue sessions.
    expect((await req('PATCH', `/apis/bos/v2/components/${id}`, { enabled: false })).status).toBe(200);
    expect((await req('PUT', `/apis/bos/v2/components/${id}`, { id, enabled: false })).status).toBe(200);
    expect(await rescueKernel(id)).toMatch(/\/kernel$/);

    const again = await req('POST', '/bootorch/v1/rescue', { template_name: 'compute', limit: id, name: 'rest-rescue' });
    expect(again.status).toBe(409);

    const u = await req('POST', '/bootorch/v1/unrescue', { template_name: 'compute', limit: id, name: 'rest-unrescue' });
    expect(u.status).toBe(201);
    expect(u.body.operation).toBe('unrescue');
    expect((await c.waitForSession('rest-unrescue', 60_000)).error).toBeNull();
    expect(await rescueKernel(id)).toBe('');
  });

  test('bad bodies, no rescue image, no credential: problems naming the field; BOS /v2/sessions keeps its operations', async () => {
    const noImage = await req('POST', '/bootorch/v1/rescue', { template_name: 'plain', limit: ids[1] });
    expect(noImage.status).toBe(400);
    expect(noImage.body.detail).toBe(
      "Session template fails check: template_name: boot_sets.compute.rescueImage: no rescue image: set the boot set's rescueImage or the option default_rescue_image",
    );
    expect((await req('POST', '/bootorch/v1/rescue', { limit: ids[1] })).body.detail).toBe('template_name: is required');
    const extra = await req('POST', '/bootorch/v1/rescue', { template_name: 'compute', operation: 'boot' });
    expect([extra.status, extra.body.detail]).toEqual([400, 'operation: is not a field of this object']);
    const bos = await req('POST', '/v2/sessions', { template_name: 'compute', operation: 'rescue' });
    expect([bos.status, bos.body.detail]).toEqual([400, 'operation: must be one of boot, reboot, shutdown']);
    expect((await req('POST', '/bootorch/v1/unrescue', { template_name: 'compute' }, {})).status).toBe(401);
    expect(await rescueKernel(ids[1]!)).toBe('');
  });
});
