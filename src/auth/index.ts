/**
 * The auth module's front door: `createAuthenticator` turns an Authorization header into a
 * Principal or an AuthFailure, whichever credential kinds the mode accepts. Authorization
 * (`authorize`), rate limiting and the GraphQLError builders are separate steps the API composes:
 *
 *   const who = await auth.authenticate(req.headers.authorization);
 *   throwUnlessOk(authorize(who, info.fieldName, args));          // per root field
 *   if (!isAuthFailure(who)) throwUnlessOk(limiter.take(who));
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { JSONWebKeySet } from 'jose';
import type { Db } from '../db/client.ts';
import { adoptApiToken, API_TOKEN_RE, createApiToken, verifyApiToken } from './api-tokens.ts';
import type { AuthMode } from './config.ts';
import { createJwtVerifier, JWT_SHAPE_RE, type ClaimMapping, type JwtVerifier } from './jwt.ts';
import { authFailure, type AuthFailure, type Principal } from './principal.ts';
import { revokeApiTokensOf } from '../db/tokens.ts';
import { transaction } from '../db/tx.ts';
import { TokenRowCache } from './token-rows.ts';

export interface AuthenticatorConfig extends ClaimMapping {
  /** Which credentials are accepted; see BOOTORCH_AUTH_MODE in config.ts. */
  mode: AuthMode;
  /** Expected JWT issuer; required for `oidc` and `both`. */
  issuer?: string;
  /** JWKS URL (default: discovered from the issuer). */
  jwksUrl?: string;
  /** Local JWKS instead of a URL (tests, air-gapped sites). */
  jwks?: JSONWebKeySet;
  /** Required JWT audience (default: not checked). */
  audience?: string | string[];
  /** Dev mode: reuse this admin token's plaintext (default: read `devTokenFile`, else mint one). */
  devAdminToken?: string;
  /** Dev mode: file keeping the dev admin token across restarts, written 0600 (default: none). */
  devTokenFile?: string;
  /** Clock for expiry checks (default `() => new Date()`). */
  now?: () => Date;
}

export interface Authenticator {
  mode: AuthMode;
  /** `Authorization` header value (`Bearer <token>`), or undefined when absent. */
  authenticate(authorizationHeader: string | undefined): Promise<Principal | AuthFailure>;
  /** Dev mode only: the admin token, for the server to print at start-up. */
  devAdminToken?: string;
  /**
   * API token rows, batched and cached while the credential watch vouches for them (the API server
   * connects the two: src/api/credential-watch.ts `keepCache`).
   */
  tokenRows?: TokenRowCache;
}

const DEV_SUBJECT = 'dev-admin';

export async function createAuthenticator(cfg: AuthenticatorConfig, db: Db): Promise<Authenticator> {
  const acceptsTokens = cfg.mode !== 'oidc';
  const acceptsJwt = cfg.mode === 'oidc' || cfg.mode === 'both';
  let jwt: JwtVerifier | undefined;
  if (acceptsJwt) {
    if (!cfg.issuer) throw new Error(`auth mode ${cfg.mode} needs an OIDC issuer`);
    jwt = createJwtVerifier({ ...cfg, issuer: cfg.issuer });
  }
  const devToken = cfg.mode === 'dev' ? await ensureDevToken(cfg, db) : undefined;
  const devTokenId = devToken ? API_TOKEN_RE.exec(devToken)![1] : undefined;
  const tokenRows = acceptsTokens ? new TokenRowCache(db) : undefined;

  return {
    mode: cfg.mode,
    devAdminToken: devToken,
    tokenRows,
    async authenticate(header) {
      if (!header?.trim()) return authFailure('missing', 'no credential (Authorization: Bearer <token>)');
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header.trim());
      if (!m) return authFailure('malformed', 'Authorization header must be "Bearer <token>"');
      const token = m[1]!;
      if (token.startsWith('bto_')) {
        if (!acceptsTokens) return authFailure('not-accepted', 'API tokens are not accepted here (auth mode oidc); use an OIDC token');
        const r = await verifyApiToken(db, token, { now: cfg.now, rows: tokenRows });
        return 'failure' in r || r.tokenId !== devTokenId ? r : { ...r, via: 'dev' };
      }
      if (JWT_SHAPE_RE.test(token)) {
        if (!jwt) return authFailure('not-accepted', `OIDC tokens are not accepted here (auth mode ${cfg.mode}); use an API token`);
        return jwt.verify(token);
      }
      return authFailure('malformed', 'token is neither a bootorch API token (bto_...) nor a JWT');
    },
  };
}

/**
 * The dev admin token: the configured one, else the one saved in `devTokenFile`, else a new one
 * (saved there). Minting revokes earlier dev admin tokens, so repeated starts leave one live.
 */
async function ensureDevToken(cfg: AuthenticatorConfig, db: Db): Promise<string> {
  const owner = { role: 'admin' as const, subject: DEV_SUBJECT, now: cfg.now };
  if (cfg.devAdminToken) {
    await adoptApiToken(db, cfg.devAdminToken, owner);
    return cfg.devAdminToken;
  }
  const saved = cfg.devTokenFile ? await readSaved(cfg.devTokenFile) : undefined;
  if (saved) {
    try {
      await adoptApiToken(db, saved, owner);
      return saved;
    } catch {
      // Revoked, or another database: mint a fresh one below and overwrite the file.
    }
  }
  const issued = await transaction(db, async (tx) => {
    await revokeApiTokensOf(tx, 'admin', DEV_SUBJECT, (cfg.now ?? (() => new Date()))());
    return createApiToken(tx, owner);
  });
  if (cfg.devTokenFile) {
    await mkdir(path.dirname(cfg.devTokenFile), { recursive: true });
    await writeFile(cfg.devTokenFile, `${issued.token}\n`, { mode: 0o600 });
    await chmod(cfg.devTokenFile, 0o600); // mode above applies only when the file is new
  }
  return issued.token;
}

async function readSaved(file: string): Promise<string | undefined> {
  try {
    const t = (await readFile(file, 'utf8')).trim();
    return API_TOKEN_RE.test(t) ? t : undefined;
  } catch {
    return undefined;
  }
}

export { tenantXnames } from '../db/tenants.ts';

export * from './principal.ts';
export * from './api-tokens.ts';
export * from './authorize.ts';
export * from './rate-limit.ts';
export * from './errors.ts';
export type { ClaimMapping } from './jwt.ts';
export { loadAuthConfig, type AuthMode } from './config.ts';
