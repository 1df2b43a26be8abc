import { describe, expect, it } from 'vitest';
import { AuthConfigError, loadAuthConfig } from '../../src/auth/config.ts';

describe('auth config', () => {
  it('has documented defaults', () => {
    expect(loadAuthConfig({})).toEqual({
      mode: 'tokens',
      issuer: undefined,
      jwksUrl: undefined,
      audience: undefined,
      roleClaim: ['realm_access.roles', 'roles'],
      tenantClaim: 'tenant',
      xnameClaim: 'xname',
      subjectClaim: 'sub',
      roleMap: { admin: 'admin', operator: 'operator', viewer: 'viewer', node: 'node' },
      devAdminToken: undefined,
      rateLimit: { burst: 200, perSecond: 50, anonymous: { burst: 20, perSecond: 2 }, open: { burst: 100, perSecond: 10 }, syncMs: 100 },
    });
    expect(loadAuthConfig({}, { defaultMode: 'dev' }).mode).toBe('dev');
    expect(loadAuthConfig({ BOOTORCH_AUTH_MODE: 'tokens' }, { defaultMode: 'dev' }).mode).toBe('tokens');
  });

  it('parses OIDC settings', () => {
    const c = loadAuthConfig({
      BOOTORCH_AUTH_MODE: 'oidc',
      OIDC_ISSUER: 'https://idp/realms/shasta',
      OIDC_AUDIENCE: 'bootorch',
      OIDC_ROLE_CLAIM: 'resource_access.bootorch.roles, realm_access.roles',
      OIDC_ROLE_MAP: 'admin=admin, monitor-ro=viewer',
      BOOTORCH_RATE_LIMIT_BURST: '0',
    });
    expect(c).toMatchObject({
      mode: 'oidc',
      audience: 'bootorch',
      roleClaim: ['resource_access.bootorch.roles', 'realm_access.roles'],
      roleMap: { admin: 'admin', 'monitor-ro': 'viewer' },
      rateLimit: null,
    });
  });

  it('reports every problem at once', () => {
    let message = '';
    try {
      loadAuthConfig({ BOOTORCH_AUTH_MODE: 'sso', OIDC_JWKS_URL: 'not a url', OIDC_ROLE_MAP: 'admin=root' });
    } catch (e) {
      expect(e).toBeInstanceOf(AuthConfigError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/BOOTORCH_AUTH_MODE/);
    expect(message).toMatch(/OIDC_JWKS_URL/);
    expect(message).toMatch(/admin=root/);
  });

  it('needs an issuer for oidc and both, and allows a fixed dev token only in dev mode', () => {
    expect(() => loadAuthConfig({ BOOTORCH_AUTH_MODE: 'both' })).toThrow(/OIDC_ISSUER: required/);
    const token = `bto_${'a'.repeat(16)}_${'b'.repeat(43)}`;
    expect(() => loadAuthConfig({ BOOTORCH_AUTH_MODE: 'tokens', BOOTORCH_DEV_ADMIN_TOKEN: token })).toThrow(/only allowed/);
    expect(loadAuthConfig({ BOOTORCH_AUTH_MODE: 'dev', BOOTORCH_DEV_ADMIN_TOKEN: token }).devAdminToken).toBe(token);
  });
});
