import { loopbackCert, openssl } from '../helpers/tls.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpAdapters } from '../../src/adapters/http-factory.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { SimWorld } from '../../src/sim/world.ts';

let world: SimWorld;
let server: SimServer;
let ca = '';

beforeAll(async () => {
  if (!openssl) return;
  const c = loopbackCert();
  ca = c.certFile;
  world = new SimWorld({ nodes: 4 });
  server = await startSimServer(world, { tls: { key: c.key, cert: c.cert } });
});
afterAll(async () => {
  await server?.close();
  world?.close();
});

describe.skipIf(!openssl)('HTTPS with a CA bundle', () => {
  it('trusts the service through CSM_CA_FILE and refuses an unknown issuer without it', async () => {
    const u = server.urls;
    expect(u.hsm).toMatch(/^https:/);
    const ep = (url: string, caFile?: string) => ({ url, caFile });
    const good = createHttpAdapters({
      hsm: ep(u.hsm, ca),
      pcs: ep(u.pcs, ca),
      bss: ep(u.bss, ca),
      cfs: ep(u.cfs, ca),
      ims: ep(u.s3, ca),
    });
    expect((await good.inventory.listNodes()).length).toBe(4);
    await good.close();
    const bad = createHttpAdapters({
      hsm: ep(u.hsm),
      pcs: ep(u.pcs),
      bss: ep(u.bss),
      cfs: ep(u.cfs),
      ims: ep(u.s3),
      retry: { retries: 0, baseMs: 1, maxMs: 1 },
    });
    const e = await bad.inventory.listNodes().catch((x) => x);
    expect(e).toMatchObject({ service: 'hsm', endpoint: 'GET /hsm/v2/State/Components' });
    expect(e.detail).toMatch(/^connection failed: (SELF_SIGNED|DEPTH_ZERO|UNABLE_TO)/);
    await bad.close();
  });
});
