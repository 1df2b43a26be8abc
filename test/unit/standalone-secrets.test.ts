import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { open, parseSecretKey, seal, secretKeyFrom, SecretKeyError } from '../../src/adapters/standalone/secrets.ts';
import { checkNodeDrafts } from '../../src/domain/node-registration.ts';
import { hookEnvironment } from '../../src/adapters/standalone/config.ts';

describe('BMC secrets (AES-256-GCM, node id bound in)', () => {
  const key = randomBytes(32);
  it('round-trips, with a fresh IV each time', () => {
    const a = seal(key, 'x1c0s0b0n0', 'calvin');
    expect(a).not.toBe(seal(key, 'x1c0s0b0n0', 'calvin'));
    expect(a).not.toContain('calvin');
    expect(open(key, 'x1c0s0b0n0', a)).toBe('calvin');
  });
  it('refuses another key, another node, an altered value, a non-sealed value', () => {
    const a = seal(key, 'x1c0s0b0n0', 'calvin');
    expect(() => open(randomBytes(32), 'x1c0s0b0n0', a)).toThrow(SecretKeyError);
    expect(() => open(key, 'x1c0s0b0n1', a)).toThrow(/does not open/);
    const parts = a.split(':');
    parts[3] = Buffer.from('xxxxxx').toString('base64url');
    expect(() => open(key, 'x1c0s0b0n0', parts.join(':'))).toThrow(SecretKeyError);
    expect(() => open(key, 'x1c0s0b0n0', 'calvin')).toThrow(/not a sealed value/);
  });
  it('takes the key as hex or base64, 32 bytes only', () => {
    expect(parseSecretKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretKey(key.toString('base64'))).toEqual(key);
    expect(() => parseSecretKey('c2hvcnQ=')).toThrow(/32 bytes/);
    expect(secretKeyFrom({})).toBeUndefined();
  });
});

describe('node drafts', () => {
  const good = {
    xname: 'X3000C0S01B0N0',
    mac: '52-54-00-AA-BB-01',
    bmc: { driver: 'ipmi', address: 'bmc1:623', username: 'admin', password: 'p' },
  };
  it('canonicalises xname and MAC and fills defaults', () => {
    const r = checkNodeDrafts([good]);
    expect(r.ok && r.value[0]).toMatchObject({
      xname: 'x3000c0s1b0n0',
      mac: '52:54:00:aa:bb:01',
      arch: 'X86',
      role: 'Compute',
      groups: [],
      enabled: true,
      locked: false,
    });
    expect(checkNodeDrafts([{ xname: 'x3000c0s2b0n0', mac: '525400aabb02' }]).ok).toBe(true);
  });
  it.each([
    [{ ...good, mac: '52:54:00' }, 'nodes[0].mac'],
    [{ ...good, xname: 'compute1' }, 'nodes[0].xname'],
    [{ ...good, arch: 'MIPS' }, 'nodes[0].arch'],
    [{ ...good, groups: ['bad group'] }, 'nodes[0].groups[0]'],
    [{ ...good, bmc: { driver: 'ipmi', address: 'http://x' } }, 'nodes[0].bmc.address'],
    [{ ...good, bmc: { driver: 'redfish', address: 'bmc1:623' } }, 'nodes[0].bmc.address'],
    [{ ...good, bmc: { driver: 'smoke' } }, 'nodes[0].bmc.driver'],
    [{ ...good, extra: 1 }, 'nodes[0]'],
  ])('names the field of %j', (draft, field) => {
    const r = checkNodeDrafts([draft]);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]!.field).toBe(field);
  });
  it('refuses an xname or MAC given twice', () => {
    const r = checkNodeDrafts([good, { ...good, mac: '52:54:00:aa:bb:02' }, { ...good, xname: 'x3000c0s9b0n0' }]);
    expect(!r.ok && r.errors.map((e) => e.field)).toEqual(['nodes[1].xname', 'nodes[2].mac']);
  });
});

describe("configuration hooks' environment", () => {
  it("keeps the site's settings and drops bootorch's credentials and settings", () => {
    const env = hookEnvironment({
      PATH: '/usr/bin',
      HOME: '/root',
      SSH_AUTH_SOCK: '/tmp/agent',
      https_proxy: 'http://proxy:3128',
      DATABASE_URL: 'postgres://u:p@db/bootorch',
      CSM_TOKEN: 'eyJ...',
      CSM_TOKEN_FILE: '/run/secrets/csm',
      BOOTORCH_SECRET_KEY: 'k',
      BOOTORCH_SECRET_KEY_FILE: '/run/secrets/key',
      OIDC_ISSUER: 'https://idp',
      PGPASSWORD: 'x',
      VAULT_TOKEN: 'y',
      AWS_SECRET_ACCESS_KEY: 'z',
    });
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/root', SSH_AUTH_SOCK: '/tmp/agent', https_proxy: 'http://proxy:3128' });
  });
});
