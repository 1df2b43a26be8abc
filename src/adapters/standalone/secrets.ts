/**
 * BMC passwords at rest: AES-256-GCM with a key the operator provides (BOOTORCH_SECRET_KEY, 32 bytes
 * as base64 or hex, or BOOTORCH_SECRET_KEY_FILE). A sealed value is `v1:<iv>:<tag>:<ciphertext>`
 * (base64url); the node id is bound in as associated data, so a secret copied onto another node's
 * row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

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

/** Throws SecretKeyError when the value was sealed with another key, for another node, or altered. */
export function open(key: Buffer, id: string, sealed: string): string {
  const [v, iv, tag, ct] = sealed.split(':');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new SecretKeyError(`the stored BMC secret of ${id} is not a sealed value`);
  try {
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    d.setAAD(Buffer.from(id, 'utf8'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  } catch {
    throw new SecretKeyError(`the stored BMC secret of ${id} does not open with BOOTORCH_SECRET_KEY (another key, or altered)`);
  }
}
