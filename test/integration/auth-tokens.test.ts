import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { freshDb, type TestDb } from '../helpers/db.ts';
import { apiTokens, tenantXnames as tenantXnamesTable } from '../../src/db/schema.ts';
import {
  assertNodeMayReport,
  authorize,
  createApiToken,
  createAuthenticator,
  createNodeToken,
  isAuthFailure,
  listApiTokens,
  revokeApiToken,
  tenantXnames,
  verifyApiToken,
  type AuthFailure,
  type Principal,
} from '../../src/auth/index.ts';

let t: TestDb;
beforeAll(async () => {
  t = await freshDb();
});
afterAll(async () => {
  await t?.drop();
});

const T0 = new Date('2030-01-01T00:00:00Z');
const at = (seconds: number) => () => new Date(T0.getTime() + seconds * 1000);
const failureOf = (r: Principal | AuthFailure) => (isAuthFailure(r) ? r.failure : 'ok');

describe('API tokens', () => {
  it('creates a token shown once and verifies it to a principal', async () => {
    const { token, info } = await createApiToken(t.db, { role: 'operator', tenant: 'vc-a', subject: 'alice', now: at(0) });
    expect(token).toMatch(/^bto_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(token).toContain(info.id);
    expect(await verifyApiToken(t.db, token, { now: at(1) })).toEqual({
      subject: 'alice',
      role: 'operator',
      tenant: 'vc-a',
      via: 'api-token',
      tokenId: info.id,
    });
  });

  it('stores only the SHA-256 of the token, never the plaintext or the secret', async () => {
    const { token, info } = await createApiToken(t.db, { role: 'viewer', subject: 'bob' });
    const [row] = await t.db.select().from(apiTokens).where(eq(apiTokens.id, info.id));
    const secret = token.split('_').slice(2).join('_');
    expect(row!.hash).not.toBe(token);
    expect(row!.hash).not.toContain(secret);
    expect(row!.hash).toBe(createHash('sha256').update(token).digest('hex'));
    const listed = await listApiTokens(t.db);
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(listed.find((l) => l.id === info.id)).toEqual(info);
    expect(Object.keys(info).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'revokedAt', 'role', 'subject', 'tenant']);
  });

  it('refuses unknown, tampered and malformed tokens alike', async () => {
    const { token } = await createApiToken(t.db, { role: 'admin', subject: 'carol' });
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(failureOf(await verifyApiToken(t.db, flipped))).toBe('unknown-token');
    expect(failureOf(await verifyApiToken(t.db, `bto_${'0'.repeat(16)}_${'x'.repeat(43)}`))).toBe('unknown-token');
    expect(failureOf(await verifyApiToken(t.db, 'bto_short'))).toBe('malformed');
  });

  it('expires on the injected clock', async () => {
    const { token } = await createApiToken(t.db, { role: 'viewer', subject: 'temp', ttlSeconds: 3600, now: at(0) });
    expect(failureOf(await verifyApiToken(t.db, token, { now: at(3599) }))).toBe('ok');
    const r = await verifyApiToken(t.db, token, { now: at(3600) });
    expect(r).toMatchObject({ failure: 'expired', message: expect.stringContaining('2030-01-01T01:00:00.000Z') });
    await expect(createApiToken(t.db, { role: 'viewer', subject: 'x', ttlSeconds: 0 })).rejects.toThrow(RangeError);
  });

  it('revokes once; a repeated revoke changes nothing', async () => {
    const { token, info } = await createApiToken(t.db, { role: 'operator', subject: 'dave' });
    expect(await revokeApiToken(t.db, info.id, { now: at(10) })).toBe(true);
    expect(await revokeApiToken(t.db, info.id, { now: at(20) })).toBe(false);
    expect(await revokeApiToken(t.db, 'feedfacefeedface')).toBe(false);
    expect(await verifyApiToken(t.db, token)).toMatchObject({ failure: 'revoked', message: expect.stringContaining('00:00:10') });
    expect((await listApiTokens(t.db)).map((l) => l.id)).not.toContain(info.id);
    expect((await listApiTokens(t.db, { includeRevoked: true })).find((l) => l.id === info.id)?.revokedAt).toEqual(at(10)());
  });

  it('issues node roles only through createNodeToken', async () => {
    await expect(createApiToken(t.db, { role: 'node' as 'admin', subject: 'x1c0s0b0n0' })).rejects.toThrow(/createNodeToken/);
  });
});

describe('node tokens', () => {
  it('are valid only for their own xname', async () => {
    const { token, info } = await createNodeToken(t.db, 'X1000C3S05B1N0');
    expect(info).toMatchObject({ role: 'node', subject: 'x1000c3s5b1n0', tenant: null });
    const p = await verifyApiToken(t.db, token);
    if (isAuthFailure(p)) throw new Error(p.message);
    expect(p).toMatchObject({ role: 'node', node: 'x1000c3s5b1n0', subject: 'x1000c3s5b1n0' });
    expect(() => assertNodeMayReport(p, 'x1000c3s5b1n0')).not.toThrow();
    expect(() => assertNodeMayReport(p, 'x1000c3s5b1n1')).toThrow(/may not report for x1000c3s5b1n1/);
    expect(authorize(p, 'reportBootState', { id: 'x1000c3s5b1n0' }).ok).toBe(true);
    expect(authorize(p, 'reportBootState', { id: 'x1000c3s5b0n0' })).toMatchObject({ ok: false, code: 'FORBIDDEN' });
    expect(authorize(p, 'components').ok).toBe(false);
    expect(authorize(p, 'createSession').ok).toBe(false);
  });

  it('rotate: a new token for the same node revokes the old one', async () => {
    const first = await createNodeToken(t.db, 'x1001c0s0b0n0');
    const second = await createNodeToken(t.db, 'x1001c0s0b0n0');
    expect(failureOf(await verifyApiToken(t.db, first.token))).toBe('revoked');
    expect(failureOf(await verifyApiToken(t.db, second.token))).toBe('ok');
    const kept = await createNodeToken(t.db, 'x1001c0s0b0n0', { revokeExisting: false });
    expect(failureOf(await verifyApiToken(t.db, second.token))).toBe('ok');
    expect(failureOf(await verifyApiToken(t.db, kept.token))).toBe('ok');
  });

  it('refuse a name that is not an xname', async () => {
    await expect(createNodeToken(t.db, 'nid000001')).rejects.toThrow(/not a valid xname/);
  });
});

describe('createAuthenticator', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bootorch-auth-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('dev mode mints an admin token, saves it 0600 and reuses it on the next start', async () => {
    const file = path.join(dir, 'dev-admin-token');
    const a = await createAuthenticator({ mode: 'dev', devTokenFile: file }, t.db);
    expect(a.devAdminToken).toMatch(/^bto_/);
    expect((await readFile(file, 'utf8')).trim()).toBe(a.devAdminToken);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await a.authenticate(`Bearer ${a.devAdminToken}`)).toMatchObject({ role: 'admin', subject: 'dev-admin', via: 'dev' });

    const b = await createAuthenticator({ mode: 'dev', devTokenFile: file }, t.db);
    expect(b.devAdminToken).toBe(a.devAdminToken);
    const live = (await listApiTokens(t.db)).filter((l) => l.subject === 'dev-admin');
    expect(live).toHaveLength(1);
  });

  it('dev mode without a file mints anew and revokes the previous dev token', async () => {
    const a = await createAuthenticator({ mode: 'dev' }, t.db);
    const b = await createAuthenticator({ mode: 'dev' }, t.db);
    expect(failureOf(await b.authenticate(`Bearer ${a.devAdminToken}`))).toBe('revoked');
    expect(failureOf(await b.authenticate(`Bearer ${b.devAdminToken}`))).toBe('ok');
  });

  it('dev mode adopts a configured token; a repeated start changes nothing', async () => {
    const fixed = `bto_${'ab'.repeat(8)}_${'Z'.repeat(43)}`;
    const a = await createAuthenticator({ mode: 'dev', devAdminToken: fixed }, t.db);
    await createAuthenticator({ mode: 'dev', devAdminToken: fixed }, t.db);
    expect(a.devAdminToken).toBe(fixed);
    expect(await a.authenticate(`bearer ${fixed}`)).toMatchObject({ role: 'admin', via: 'dev' });
  });

  it('parses the header and reports what is wrong', async () => {
    const a = await createAuthenticator({ mode: 'tokens' }, t.db);
    expect(a.devAdminToken).toBeUndefined();
    expect(failureOf(await a.authenticate(undefined))).toBe('missing');
    expect(failureOf(await a.authenticate('  '))).toBe('missing');
    expect(failureOf(await a.authenticate('Basic dXNlcjpwYXNz'))).toBe('malformed');
    expect(failureOf(await a.authenticate('Bearer a b'))).toBe('malformed');
    expect(failureOf(await a.authenticate('Bearer hello'))).toBe('malformed');
    expect(failureOf(await a.authenticate('Bearer aaa.bbb.ccc'))).toBe('not-accepted');
  });

  it('oidc refuses API tokens; both accepts either', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256' }] };
    const issuer = 'https://idp.test/realms/shasta';
    const jwt = await new SignJWT({ sub: 'eve', realm_access: { roles: ['viewer'] }, tenant: 'vc-a' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k' })
      .setIssuer(issuer)
      .setExpirationTime(Math.floor(T0.getTime() / 1000) + 60)
      .sign(privateKey);
    const { token } = await createApiToken(t.db, { role: 'operator', subject: 'frank' });

    const oidc = await createAuthenticator({ mode: 'oidc', issuer, jwks, now: at(0) }, t.db);
    expect(await oidc.authenticate(`Bearer ${jwt}`)).toEqual({
      subject: 'eve',
      role: 'viewer',
      tenant: 'vc-a',
      via: 'jwt',
      expiresAt: new Date(Math.floor(T0.getTime() / 1000) * 1000 + 60_000),
    });
    expect(failureOf(await oidc.authenticate(`Bearer ${token}`))).toBe('not-accepted');

    const both = await createAuthenticator({ mode: 'both', issuer, jwks, now: at(0) }, t.db);
    expect(failureOf(await both.authenticate(`Bearer ${jwt}`))).toBe('ok');
    expect(await both.authenticate(`Bearer ${token}`)).toMatchObject({ subject: 'frank', via: 'api-token' });
    const later = await createAuthenticator({ mode: 'both', issuer, jwks, now: at(120) }, t.db);
    expect(failureOf(await later.authenticate(`Bearer ${jwt}`))).toBe('expired');
    await expect(createAuthenticator({ mode: 'oidc' }, t.db)).rejects.toThrow(/issuer/);
  });
});

describe('tenantXnames', () => {
  it('returns the set a tenant owns', async () => {
    await t.db.insert(tenantXnamesTable).values([
      { tenant: 'vc-a', xname: 'x1000c0s0b0n0' },
      { tenant: 'vc-a', xname: 'x1000c0s0b0n1' },
      { tenant: 'vc-b', xname: 'x1000c0s1b0n0' },
    ]);
    expect(await tenantXnames(t.db, 'vc-a')).toEqual(new Set(['x1000c0s0b0n0', 'x1000c0s0b0n1']));
    expect(await tenantXnames(t.db, 'nobody')).toEqual(new Set());
  });
});
