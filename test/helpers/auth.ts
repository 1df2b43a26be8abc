/**
 * Credentials for tests that talk to a real API server: the server runs with a real authenticator
 * (API tokens, as `bootorch api` does by default) and the tests carry tokens minted here.
 */
import os from 'node:os';
import path from 'node:path';
import { createApiToken, createAuthenticator, createNodeToken, type Role } from '../../src/auth/index.ts';
import type { ApiAuth } from '../../src/api/auth.ts';
import type { Db } from '../../src/db/client.ts';

export interface TestAuth {
  /** Pass as startApiServer's `auth`. */
  auth: ApiAuth;
  /** An untenanted admin token whose subject is `tester` (what the API tests act as). */
  adminToken: string;
  /** `{ authorization: 'Bearer ...' }` for a token. */
  bearer(token: string): Record<string, string>;
  /** Mint a token: a human role (optionally for a tenant), or `node` for an xname. */
  token(role: Role, o?: { tenant?: string; subject?: string; xname?: string }): Promise<string>;
}

export async function testAuth(db: Db, o: { adminSubject?: string } = {}): Promise<TestAuth> {
  const authenticator = await createAuthenticator({ mode: 'tokens' }, db);
  const admin = await createApiToken(db, { role: 'admin', subject: o.adminSubject ?? 'tester' });
  return {
    auth: { authenticator },
    adminToken: admin.token,
    bearer: (token) => ({ authorization: `Bearer ${token}` }),
    async token(role, t = {}) {
      if (role === 'node') return (await createNodeToken(db, t.xname ?? t.subject ?? 'x1c0s0b0n0')).token;
      return (await createApiToken(db, { role, tenant: t.tenant ?? null, subject: t.subject ?? `${role}-${t.tenant ?? 'all'}` })).token;
    },
  };
}

/**
 * A fixed admin token for bootorch processes a test spawns (`bootorch api|dev`): with devAuthEnv() in
 * their environment they run in dev auth mode and accept this token (BOOTORCH_DEV_ADMIN_TOKEN).
 */
export const DEV_ADMIN_TOKEN = 'bto_00000000000000d0_devadmintokenfortestsonlyxxxxxxxxxxxxxxxxxx';

export function devAuthEnv(): Record<string, string> {
  // A data folder of the test run's own: dev mode keeps its admin token there, and the project's
  // .data/dev-admin-token (what `npm start` and the CLI use) must never end up holding this test token.
  return {
    BOOTORCH_AUTH_MODE: 'dev',
    BOOTORCH_DEV_ADMIN_TOKEN: DEV_ADMIN_TOKEN,
    BOOTORCH_DATA_DIR: path.join(os.tmpdir(), `bootorch-test-${process.pid}`),
  };
}

/** `{ authorization: 'Bearer <DEV_ADMIN_TOKEN>' }`: headers, or graphql-ws connectionParams. */
export const devAdminHeaders = (): Record<string, string> => ({ authorization: `Bearer ${DEV_ADMIN_TOKEN}` });
