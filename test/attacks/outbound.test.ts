/**
 * Outside credentials only to their own service; operator-written URLs fetched safely. `bootorch api`
 * runs as its own process in `http` mode with a CSM token, against the simulator's CSM services and a
 * separate S3 endpoint; listeners on 127.0.0.1 record every request and its headers. A tenant operator
 * points template paths and manifest links at them, as the hostile client did: the credential must
 * reach the S3 endpoint and nothing else, an internal listener must get no request at all, and no
 * answer may carry an internal page's body. The client and guard parts (redirects, address forms,
 * size and time bounds, standalone mode) are checked in-process against the same kind of listeners.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdapters } from '../../src/adapters/factory.ts';
import { DEFAULT_RETRY, ServiceClient } from '../../src/adapters/http.ts';
import { createImageClient } from '../../src/adapters/images/client.ts';
import { MAX_MANIFEST_BYTES } from '../../src/adapters/images/manifest.ts';
import { OutboundGuard } from '../../src/adapters/outbound.ts';
import { parseOriginList } from '../../src/adapters/outbound-policy.ts';
import { StandaloneImages } from '../../src/adapters/standalone/images.ts';
import { createApiToken } from '../../src/auth/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startSimServer, type SimServer } from '../../src/sim/server.ts';
import { SimWorld } from '../../src/sim/world.ts';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { startRole, type RoleProcess } from '../helpers/processes.ts';

const CSM_TOKEN = 'csm-admin-client-token-must-stay-home';
const INTERNAL_BODY = 'INTERNAL-PAGE aws_secret_access_key=wJalrXUtnFEMI';

interface Listener {
  origin: string;
  seen: Array<{ path: string; authorization?: string }>;
  close(): Promise<void>;
}

/** A server on 127.0.0.1 that records each request's path and Authorization header. */
async function listener(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Listener> {
  const seen: Listener['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    handle(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const manifest = (bootParameters?: string) =>
  JSON.stringify({
    artifacts: [
      { type: 'application/vnd.cray.image.kernel', link: { path: 's3://boot-images/x/kernel', etag: 'k1' } },
      { type: 'application/vnd.cray.image.initrd', link: { path: 's3://boot-images/x/initrd', etag: 'i1' } },
      ...(bootParameters ? [{ type: 'application/vnd.cray.image.parameters.boot', link: { path: bootParameters, etag: 'p1' } }] : []),
    ],
  });

let world: SimWorld;
let sim: SimServer;
/** Answers anything with an internal page; nobody allowed it. */
let internal: Listener;
/** An image server the admin allowed (BOOTORCH_IMAGE_ORIGINS). */
let allowed: Listener;
/** The S3 endpoint (S3_URL): the only image origin that gets the CSM token. */
let s3: Listener;
let db: TestDb;
let api: RoleProcess;
let apiUrl: string;
let operator: string;
let node: string;

beforeAll(async () => {
  internal = await listener((_req, res) => res.end(INTERNAL_BODY));
  allowed = await listener((req, res) => (req.url?.endsWith('.json') ? res.end(manifest()) : res.end('console=ttyS0')));
  const objects: Record<string, () => [number, Record<string, string>, string]> = {
    '/boot-images/ok/manifest.json': () => [200, {}, manifest('s3://boot-images/ok/boot_parameters')],
    '/boot-images/ok/boot_parameters': () => [200, {}, 'console=ttyS0 quiet\n'],
    '/boot-images/to-allowed/manifest.json': () => [307, { location: `${allowed.origin}/redirected/manifest.json` }, ''],
    '/boot-images/to-internal/manifest.json': () => [307, { location: `${internal.origin}/manifest.json` }, ''],
    '/boot-images/params-internal/manifest.json': () => [200, {}, manifest(`${internal.origin}/latest/meta-data`)],
    '/boot-images/params-page/manifest.json': () => [200, {}, manifest('s3://boot-images/params-page/page.html')],
    '/boot-images/params-page/page.html': () => [200, {}, `<html>\n${INTERNAL_BODY}\u0000\n</html>`],
  };
  s3 = await listener((req, res) => {
    const o = objects[req.url ?? '']?.() ?? [404, {}, 'no such key'];
    res.writeHead(o[0], o[1]).end(o[2]);
  });
  world = new SimWorld({ nodes: 4, seed: 1 });
  sim = await startSimServer(world, {});
  node = world.ids()[0]!;
  db = await freshDb();
  const admin = (await createApiToken(db.db, { role: 'admin', subject: 'outbound-admin' })).token;
  operator = (await createApiToken(db.db, { role: 'operator', tenant: 'acme', subject: 'acme-operator' })).token;
  api = startRole('api', {
    DATABASE_URL: db.url,
    BOOTORCH_ADAPTERS: 'http',
    BOOTORCH_AUTH_MODE: 'tokens',
    PORT: '0',
    HSM_URL: sim.urls.hsm,
    PCS_URL: sim.urls.pcs,
    BSS_URL: sim.urls.bss,
    CFS_URL: sim.urls.cfs,
    S3_URL: s3.origin,
    CSM_TOKEN,
    BOOTORCH_IMAGE_ORIGINS: allowed.origin,
  });
  apiUrl = (await api.waitFor(/bootorch api: (\S+)/))[1]!;
  const t = await gql(admin, 'mutation($x: [ID!]!) { setTenantXnames(tenant: "acme", xnames: $x) { name } }', { x: [node] });
  expect(t.errors).toBeUndefined();
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await db?.drop();
  await sim?.close();
  world?.close();
  await Promise.all([internal, allowed, s3].map((l) => l?.close()));
});

async function gql(token: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(apiUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the answer's shape is the query's.
  return (await r.json()) as { data?: any; errors?: Array<{ message: string; extensions?: unknown }> };
}

/** The operator's template `name` with one boot set at `path`; then what validate, plan and create answer. */
async function tryPath(name: string, path: string) {
  const put = await gql(
    operator,
    'mutation($n: String!, $b: [BootSetInput!]!) { putSessionTemplate(name: $n, input: { bootSets: $b }) { template { name } } }',
    { n: name, b: [{ name: 'b', path, type: 's3', nodeList: [node] }] },
  );
  expect(put.errors).toBeUndefined();
  const validate = await gql(operator, 'query($n: String!) { validateSessionTemplate(name: $n) { valid errors { field message } } }', {
    n: name,
  });
  const plan = await gql(
    operator,
    `query($n: String!) { planSession(input: { operation: REBOOT, templateName: $n }) {
       valid errors { message } setupError bootSets { kernel initrd kernelParameters } } }`,
    { n: name },
  );
  const create = await gql(
    operator,
    'mutation($n: String!) { createSession(input: { operation: REBOOT, templateName: $n }) { session { name } } }',
    {
      n: name,
    },
  );
  return { validate, plan, create, all: JSON.stringify([validate, plan, create]) };
}

describe('http mode: a tenant operator points image paths at listeners', () => {
  test('an internal listener: validate, plan and create refuse it before connecting, naming the origin', async () => {
    const r = await tryPath('internal', `${internal.origin}/manifest.json`);
    expect(r.validate.data.validateSessionTemplate.valid).toBe(false);
    const why = `origin ${internal.origin} is not allowed (BOOTORCH_IMAGE_ORIGINS); loopback address refused`;
    expect(r.validate.data.validateSessionTemplate.errors[0].message).toContain(why);
    expect(r.plan.data.planSession).toMatchObject({ valid: false, bootSets: [] });
    expect(r.plan.data.planSession.errors[0].message).toContain(why);
    expect(r.create.errors?.[0]).toBeDefined();
    expect(JSON.stringify(r.create.errors)).toContain(why);
    expect(internal.seen).toEqual([]);
  });

  test('an allowed origin is read without the CSM token; the S3 endpoint keeps it', async () => {
    const before = allowed.seen.length;
    const r = await tryPath('allowed', `${allowed.origin}/images/a/manifest.json`);
    expect(r.validate.data.validateSessionTemplate).toMatchObject({ valid: true, errors: [] });
    expect(r.plan.data.planSession.bootSets).toEqual([
      { kernel: 's3://boot-images/x/kernel', initrd: 's3://boot-images/x/initrd', kernelParameters: expect.any(String) },
    ]);
    const got = allowed.seen.slice(before);
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((x) => x.path === '/images/a/manifest.json' && x.authorization === undefined)).toBe(true);

    const s3Before = s3.seen.length;
    const ok = await tryPath('s3', 's3://boot-images/ok/manifest.json');
    expect(ok.validate.data.validateSessionTemplate.valid).toBe(true);
    expect(ok.plan.data.planSession.bootSets[0].kernelParameters).toMatch(/^console=ttyS0 quiet /);
    expect(s3.seen.slice(s3Before).every((x) => x.authorization === `Bearer ${CSM_TOKEN}`)).toBe(true);
  });

  test('the S3 endpoint answering 307: to an allowed origin the token is dropped, to an internal one the redirect is refused', async () => {
    const before = allowed.seen.length;
    const r = await tryPath('redirect-allowed', 's3://boot-images/to-allowed/manifest.json');
    expect(r.validate.data.validateSessionTemplate.valid).toBe(true);
    const got = allowed.seen.slice(before);
    expect(got.map((x) => x.path)).toContain('/redirected/manifest.json');
    expect(got.every((x) => x.authorization === undefined)).toBe(true);

    const bad = await tryPath('redirect-internal', 's3://boot-images/to-internal/manifest.json');
    expect(bad.validate.data.validateSessionTemplate.errors[0].message).toContain(
      `redirect to ${internal.origin}: origin ${internal.origin} is not allowed`,
    );
    expect(bad.plan.data.planSession.valid).toBe(false);
    expect(internal.seen).toEqual([]);
  });

  test("a manifest's boot-parameters link at an internal page is refused; no answer carries a page's body", async () => {
    const r = await tryPath('params-internal', 's3://boot-images/params-internal/manifest.json');
    expect(r.validate.data.validateSessionTemplate.errors[0].message).toContain(`origin ${internal.origin} is not allowed`);
    expect(r.plan.data.planSession).toMatchObject({ valid: false, bootSets: [] });
    expect(internal.seen).toEqual([]);
    expect(r.all).not.toContain('INTERNAL-PAGE');

    // At an allowed origin, an object that is not a kernel command line is refused unread into the plan.
    const page = await tryPath('params-page', 's3://boot-images/params-page/manifest.json');
    expect(page.validate.data.validateSessionTemplate.errors[0].message).toContain('boot parameters object is not a kernel command line');
    expect(page.plan.data.planSession).toMatchObject({ valid: false, bootSets: [] });
    expect(page.all).not.toContain('INTERNAL-PAGE');
  });
});

describe('the clients in-process', () => {
  test('a CSM client sends its token to its own origin only: not after a 307 elsewhere, not to an absolute URL elsewhere', async () => {
    const rec = await listener((_req, res) => res.end('[]'));
    const gw = await listener((req, res) => res.writeHead(307, { location: `${rec.origin}${req.url}` }).end());
    const client = new ServiceClient('hsm', { url: gw.origin, token: CSM_TOKEN }, () => 5000, { ...DEFAULT_RETRY, retries: 0 });
    try {
      await client.request({ endpoint: 'GET /hsm/v2/groups', method: 'GET', path: '/hsm/v2/groups' });
      await client.request({ endpoint: 'GET abs', method: 'GET', path: `${rec.origin}/absolute` });
      expect(gw.seen).toEqual([{ path: '/hsm/v2/groups', authorization: `Bearer ${CSM_TOKEN}` }]);
      expect(rec.seen).toEqual([
        { path: '/hsm/v2/groups', authorization: undefined },
        { path: '/absolute', authorization: undefined },
      ]);
    } finally {
      await client.close();
      await Promise.all([rec.close(), gw.close()]);
    }
  });

  test('`*` allows public origins only: loopback in any spelling, names of this machine, and names resolving inside are refused', async () => {
    const port = new URL(internal.origin).port;
    const resolved: Record<string, string[]> = { 'rebind.example': ['93.184.215.14', '127.0.0.1'], 'meta.example': ['169.254.169.254'] };
    const guard = new OutboundGuard({
      origins: parseOriginList('*'),
      maxBytes: MAX_MANIFEST_BYTES,
      resolve: async (h) => (resolved[h] ?? []).map((address) => ({ address, family: 4 })),
    });
    const images = new StandaloneImages(new ServiceClient('ims', { url: '' }, () => 5000, { ...DEFAULT_RETRY, retries: 0 }, guard));
    try {
      const cases: Array<[string, RegExp]> = [
        [`http://127.0.0.1:${port}/m.json`, /origin http:\/\/127\.0\.0\.1:\d+: loopback address refused/],
        [`http://2130706433:${port}/m.json`, /loopback address refused/],
        [`http://0177.0.0.1:${port}/m.json`, /loopback address refused/],
        [`http://[::ffff:127.0.0.1]:${port}/m.json`, /loopback address refused/],
        [`http://localhost:${port}/m.json`, /loopback host name refused/],
        [`http://169.254.169.254/latest/meta-data`, /cloud metadata address refused/],
        [`http://metadata.google.internal/computeMetadata/v1/`, /cloud metadata host name refused/],
        [`http://rebind.example:${port}/m.json`, /host rebind\.example: resolves to 127\.0\.0\.1, loopback address refused/],
        [`http://meta.example/`, /resolves to 169\.254\.169\.254, cloud metadata address refused/],
        ['file:///etc/passwd', /not an http\(s\) URL nor a path/],
      ];
      for (const [url, why] of cases) {
        const e = await images.resolve(url).catch((x: unknown) => x);
        expect(e, url).toMatchObject({ service: 'ims', transient: false });
        expect((e as Error).message, url).toMatch(why);
      }
      expect(internal.seen).toEqual([]);
    } finally {
      await guard.close();
    }
  });

  test('answers are bounded in size and time, and a refused status does not echo the body', async () => {
    const big = await listener((req, res) => {
      if (req.url === '/big.json') return res.end(Buffer.alloc(MAX_MANIFEST_BYTES + 10, 32));
      if (req.url === '/drip.json') {
        res.writeHead(200);
        const t = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(t));
        return;
      }
      res.writeHead(403).end(INTERNAL_BODY);
    });
    const client = createImageClient({
      origins: parseOriginList(big.origin),
      timeoutMs: () => 600,
      retry: { ...DEFAULT_RETRY, retries: 0 },
    });
    const images = new StandaloneImages(client);
    try {
      const large = await images.resolve(`${big.origin}/big.json`).then(
        () => new Error('resolved'),
        (x: Error) => x,
      );
      expect(large.message).toContain(`answer is larger than ${MAX_MANIFEST_BYTES} bytes`);
      const started = Date.now();
      const slow = await images.resolve(`${big.origin}/drip.json`).then(
        () => new Error('resolved'),
        (x: Error) => x,
      );
      expect(slow.message).toContain('timeout: no response within 0.6 s');
      expect(Date.now() - started).toBeLessThan(5000);
      const denied = await images.resolve(`${big.origin}/denied.json`).then(
        () => new Error('resolved'),
        (x: Error) => x,
      );
      expect(denied).toMatchObject({ status: 403, detail: 'Forbidden' });
      expect(denied.message).not.toContain('INTERNAL-PAGE');
    } finally {
      await client.close();
      await big.close();
    }
  });

  test('standalone mode, from the environment: URLs only from BOOTORCH_IMAGE_ORIGINS', async () => {
    const env = { BOOTORCH_ADAPTERS: 'standalone', BOOTORCH_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') };
    const closed = createAdapters(loadConfig(env), undefined, { db: db.db });
    const e = await closed.images.resolve(`${internal.origin}/manifest.json`).then(
      () => new Error('resolved'),
      (x: Error) => x,
    );
    expect(e.message).toContain(`origin ${internal.origin} is not allowed (BOOTORCH_IMAGE_ORIGINS); loopback address refused`);
    expect(internal.seen).toEqual([]);

    const open = createAdapters(loadConfig({ ...env, BOOTORCH_IMAGE_ORIGINS: allowed.origin }), undefined, { db: db.db });
    const before = allowed.seen.length;
    expect(await open.images.resolve(`${allowed.origin}/standalone/manifest.json`, undefined)).toMatchObject({
      kernel: 's3://boot-images/x/kernel',
    });
    expect(allowed.seen.slice(before)).toEqual([{ path: '/standalone/manifest.json', authorization: undefined }]);
    expect(() => loadConfig({ ...env, BOOTORCH_IMAGE_ORIGINS: 'https://x.example/path' })).toThrow(
      /BOOTORCH_IMAGE_ORIGINS: .*nothing may follow/,
    );
  });
});
