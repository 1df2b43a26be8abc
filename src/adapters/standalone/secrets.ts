/**
 * Secrets at rest (BMC passwords, config-drive user data): AES-256-GCM with a key the operator
 * provides (BOOTORCH_SECRET_KEY, 32 bytes as base64 or hex, or BOOTORCH_SECRET_KEY_FILE). A sealed
 * value is `v1:<iv>:<tag>:<ciphertext>` (base64url). What a value is for is bound in as associated
 * data: a BMC password to its node's id, so a secret copied onto another node's row does not open;
 * user data to USER_DATA, so neither kind opens as the other. Sealed values are never returned by
 * the API (a flag and a length instead).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class SecretKeyError extends Error {}

/** The key from the environment, or undefined when none is configured. Throws on a malformed key. */
export function secretKeyFrom(env: { BOOTORCH_SECRET_KEY?: string; BOOTORCH_SECRET_KEY_FILE?: string }): Buffer | undefined {
  const raw = env.BOOTORCH_SECRET_KEY ?? (env.BOOTORCH_SECRET_KEY_FILE ? readFileSync(env.BOOTORCH_SECRET_KEY_FILE, 'utf8') : undefined);
  if (raw === undefined) return undefined;
  return parseSecretKey(raw.trim());
}

export function parseSecretKey(text: string): Buffer {
  const key = /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32)
    throw new SecretKeyError('BOOTORCH_SECRET_KEY must be 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)');
  return key;
}

export function seal(key: Buffer, id: string, plaintext: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(id, 'utf8'));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return ['v1', iv, c.getAuthTag(), ct].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join(':');
}

/**
 * Throws SecretKeyError when the value was sealed with another key, for another node, or altered.
 * `what` names the secret in the error (default: a node's BMC secret).
 */
export function open(key: Buffer, id: string, sealed: string, what = `the stored BMC secret of ${id}`): string {
  const [v, iv, tag, ct] = sealed.split(':');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new SecretKeyError(`${what} is not a sealed value`);
  try {
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    d.setAAD(Buffer.from(id, 'utf8'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`${what} does not open with BOOTORCH_SECRET_KEY (another key, or altered)`);
  }
}

/** The length in bytes of what a sealed value holds (GCM's ciphertext is as long as its plaintext). */
export function sealedBytes(sealed: string): number {
  return Buffer.from(sealed.split(':')[3] ?? '', 'base64url').length;
}

/** Associated data of config-drive user data: one template's user data is shared by all its nodes. */
export const USER_DATA = 'bootorch:config-drive:user-data';

export const sealUserData = (key: Buffer, text: string) => seal(key, USER_DATA, text);
export const openUserData = (key: Buffer, sealed: string) => open(key, USER_DATA, sealed, "the config drive's stored user data");

/**
 * `dev`'s key when none is configured: kept beside its embedded database in its data folder (0600),
 * made on first start, so what dev sealed still opens after a restart.
 */
export function devSecretKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return parseSecretKey(readFileSync(file, 'utf8').trim());
}
