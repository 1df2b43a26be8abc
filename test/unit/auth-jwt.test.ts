import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type JSONWebKeySet, type JWTPayload } from 'jose';
import { claimsToPrincipal, createJwtVerifier, type JwtVerifierOptions } from '../../src/auth/jwt.ts';
import type { AuthFailure, Principal } from '../../src/auth/principal.ts';

const ISSUER = 'https://idp.test/realms/shasta';
const NOW = new Date('2030-01-01T00:00:00Z');
const sec = (d: Date) => Math.floor(d.getTime() / 1000);

let key: CryptoKey;
let otherKey: CryptoKey;
let jwks: JSONWebKeySet;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  const other = await generateKeyPair('ES256');
  key = pair.privateKey;
  otherKey = other.privateKey;
  jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
});

function sign(claims: JWTPayload, o: { key?: CryptoKey; kid?: string; iss?: string; exp?: Date } = {}) {
  return new SignJWT({ sub: 'alice', realm_access: { roles: ['operator'] }, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: o.kid ?? 'k1' })
    .setIssuer(o.iss ?? ISSUER)
    .setIssuedAt(sec(NOW) - 60)
    .setExpirationTime(sec(o.exp ?? new Date(NOW.getTime() + 300_000)))
    .sign(o.key ?? key);
}

const verifier = (more: Partial<JwtVerifierOptions> = {}) => createJwtVerifier({ issuer: ISSUER, jwks, now: () => NOW, ...more });

const failureOf = (r: Principal | AuthFailure) => ('failure' in r ? r.failure : 'ok');

describe('JWT verification', () => {
  it('accepts a valid token and maps it to a principal', async () => {
    const r = await verifier().verify(await sign({}));
    expect(r).toEqual({ subject: 'alice', role: 'operator', tenant: null, via: 'jwt', expiresAt: expect.any(Date) });
  });

  it('rejects an expired token, honouring the clock tolerance', async () => {
    const token = await sign({}, { exp: new Date(NOW.getTime() - 10_000) });
    expect(failureOf(await verifier().verify(token))).toBe('ok'); // 10 s late is within the default 30 s
    const r = await verifier({ clockToleranceSeconds: 0 }).verify(token);
    expect(r).toMatchObject({ failure: 'expired', message: expect.stringMatching(/expired/) });
  });

  it('rejects a token that expires only later on the injected clock', async () => {
    const token = await sign({});
    const later = verifier({ now: () => new Date(NOW.getTime() + 3_600_000) });
    expect(failureOf(await later.verify(token))).toBe('expired');
  });

  it('names the wrong issuer', async () => {
    const r = await verifier().verify(await sign({}, { iss: 'https://evil.test' }));
    expect(r).toMatchObject({ failure: 'wrong-issuer' });
    expect((r as AuthFailure).message).toContain('https://evil.test');
    expect((r as AuthFailure).message).toContain(ISSUER);
  });

  it('checks the audience only when configured', async () => {
    const token = await sign({ aud: 'other-client' });
    expect(failureOf(await verifier().verify(token))).toBe('ok');
    expect(failureOf(await verifier({ audience: 'bootorch' }).verify(token))).toBe('wrong-audience');
    expect(failureOf(await verifier({ audience: 'bootorch' }).verify(await sign({ aud: ['x', 'bootorch'] })))).toBe('ok');
  });

  it('rejects a bad signature and an unknown key id', async () => {
    expect(failureOf(await verifier().verify(await sign({}, { key: otherKey })))).toBe('bad-signature');
    expect(failureOf(await verifier().verify(await sign({}, { key: otherKey, kid: 'k2' })))).toBe('unknown-key');
  });

  it('rejects a tampered payload', async () => {
    const [h, , s] = (await sign({})).split('.');
    const forged = Buffer.from(
      JSON.stringify({ sub: 'mallory', iss: ISSUER, exp: sec(NOW) + 300, realm_access: { roles: ['admin'] } }),
    ).toString('base64url');
    expect(failureOf(await verifier().verify(`${h}.${forged}.${s}`))).toBe('bad-signature');
  });

  it('rejects HS256 (a public JWKS must never verify a symmetric signature) and alg none', async () => {
    const secret = new TextEncoder().encode('x'.repeat(32));
    const hs = await new SignJWT({ sub: 'a', realm_access: { roles: ['admin'] } })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setExpirationTime(sec(NOW) + 60)
      .sign(secret);
    expect(failureOf(await verifier().verify(hs))).toBe('malformed');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'a', iss: ISSUER })).toString('base64url')}.`;
    expect(failureOf(await verifier().verify(none))).toBe('malformed');
  });

  it('requires exp', async () => {
    const t = await new SignJWT({ sub: 'a', roles: ['admin'] }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).sign(key);
    expect(failureOf(await verifier().verify(t))).toBe('invalid-claims');
  });

  it('maps a node token with its xname, canonicalised', async () => {
    const r = await verifier().verify(await sign({ sub: 'svc-node', realm_access: { roles: ['node'] }, xname: 'x1000C0S01B0N0' }));
    expect(r).toEqual({ subject: 'svc-node', role: 'node', tenant: null, node: 'x1000c0s1b0n0', via: 'jwt', expiresAt: expect.any(Date) });
  });

  it('reads the tenant from the configured claim', async () => {
    const r = await verifier({ tenantClaim: 'ext.tenant' }).verify(await sign({ ext: { tenant: 'vcluster-a' } }));
    expect(r).toMatchObject({ tenant: 'vcluster-a', role: 'operator' });
  });
});

describe('claimsToPrincipal', () => {
  const kc = (roles: string[]) => ({ sub: 'u', realm_access: { roles } });
  it.each([
    ['realm roles, highest wins', kc(['viewer', 'admin', 'offline_access']), {}, 'admin'],
    ['unmapped IdP roles grant nothing', kc(['user', 'offline_access']), {}, 'no-role'],
    ['top-level roles claim', { sub: 'u', roles: ['viewer'] }, {}, 'viewer'],
    ['scope-style role string', { sub: 'u', roles: 'viewer operator' }, {}, 'operator'],
    [
      'Keycloak client roles',
      { sub: 'u', resource_access: { bootorch: { roles: ['admin'] } } },
      { roleClaim: 'resource_access.bootorch.roles' },
      'admin',
    ],
    [
      'other clients are not read',
      { sub: 'u', resource_access: { grafana: { roles: ['admin'] } } },
      { roleClaim: 'resource_access.bootorch.roles' },
      'no-role',
    ],
    ['CSM role names through a role map', kc(['admin', 'monitor-ro']), { roleMap: { 'monitor-ro': 'viewer' as const } }, 'viewer'],
    ['human role outranks node', kc(['node', 'viewer']), {}, 'viewer'],
    ['node without xname', kc(['node']), {}, 'invalid-claims'],
    ['node with a bad xname', { ...kc(['node']), xname: 'nid000001' }, {}, 'invalid-claims'],
    ['prototype names are not roles', kc(['constructor', '__proto__']), {}, 'no-role'],
    ['no subject', { realm_access: { roles: ['admin'] } }, {}, 'invalid-claims'],
    ['non-string tenant', { ...kc(['admin']), tenant: ['a'] }, {}, 'invalid-claims'],
    ['custom subject claim', { preferred_username: 'bob', roles: ['viewer'] }, { subjectClaim: 'preferred_username' }, 'viewer'],
  ])('%s', (_name, claims, mapping, expected) => {
    const r = claimsToPrincipal(claims as JWTPayload, mapping);
    expect('failure' in r ? r.failure : r.role).toBe(expected);
  });

  it('treats an empty tenant as untenanted', () => {
    expect(claimsToPrincipal({ ...kc(['viewer']), tenant: '' })).toMatchObject({ tenant: null });
  });
});

describe('remote JWKS and discovery (loopback server)', () => {
  let server: Server;
  let base: string;
  let hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url!);
      const body =
        req.url === '/.well-known/openid-configuration'
          ? { issuer: base, jwks_uri: `${base}/certs` }
          : req.url === '/certs'
            ? jwks
            : undefined;
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('verifies against a JWKS URL', async () => {
    const v = createJwtVerifier({ issuer: ISSUER, jwksUrl: `${base}/certs`, now: () => NOW });
    expect(failureOf(await v.verify(await sign({})))).toBe('ok');
  });

  it('finds the JWKS through discovery, fetching the document once', async () => {
    hits = [];
    const v = createJwtVerifier({ issuer: base, now: () => NOW });
    expect(failureOf(await v.verify(await sign({}, { iss: base })))).toBe('ok');
    expect(failureOf(await v.verify(await sign({ sub: 'bob' }, { iss: base })))).toBe('ok');
    expect(hits.filter((h) => h.includes('openid-configuration'))).toHaveLength(1);
  });

  it("reports an unreachable key set as idp-unavailable, not as the caller's fault", async () => {
    const v = createJwtVerifier({ issuer: ISSUER, jwksUrl: `${base}/missing`, now: () => NOW });
    expect(failureOf(await v.verify(await sign({})))).toBe('idp-unavailable');
    const d = createJwtVerifier({ issuer: `${base}/nowhere`, now: () => NOW });
    expect(failureOf(await d.verify(await sign({}, { iss: `${base}/nowhere` })))).toBe('idp-unavailable');
  });
});
