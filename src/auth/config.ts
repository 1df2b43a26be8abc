/**
 * Auth environment variables, validated with zod like src/config.ts: every problem is collected and
 * reported at once. `loadAuthConfig` returns the options `createAuthenticator` takes.
 */
import { z } from 'zod';
import { ROLES, type Role } from './principal.ts';
import { API_TOKEN_RE } from './api-tokens.ts';

export const AUTH_MODES = ['dev', 'tokens', 'oidc', 'both'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

const list = (def: string) =>
  z
    .string()
    .default(def)
    .transform((s) =>
      s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    );

/** `idpRole=bootorchRole,...`; an IdP role not listed grants nothing. */
const roleMap = z
  .string()
  .default('admin=admin,operator=operator,viewer=viewer,node=node')
  .transform((s, ctx) => {
    const out: Record<string, Role> = {};
    for (const pair of s
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const [from, to] = pair.split('=').map((p) => p.trim());
      if (!from || !(ROLES as readonly string[]).includes(to ?? '')) {
        ctx.addIssue({ code: 'custom', message: `"${pair}" is not idpRole=${ROLES.join('|')}` });
        continue;
      }
      out[from] = to as Role;
    }
    return out;
  });

export const authEnvSchema = z.object({
  /**
   * `dev`: API tokens, plus an admin token created (or reused) at start-up and printed.
   * `tokens`: locally issued API tokens only. `oidc`: JWTs from OIDC_ISSUER only. `both`: either.
   * Default: the caller's `defaultMode` (`dev` for `npm start`, `tokens` for the server roles).
   * There is no "off": every mode needs a credential.
   */
  BOOTORCH_AUTH_MODE: z.enum(AUTH_MODES).optional(),
  /** Expected `iss` of JWTs, e.g. `https://api-gw-service-nmn.local/keycloak/realms/shasta`. Required for oidc/both. */
  OIDC_ISSUER: z.url().optional(),
  /** JWKS URL (default: `jwks_uri` from `<OIDC_ISSUER>/.well-known/openid-configuration`, fetched on first use). */
  OIDC_JWKS_URL: z.url().optional(),
  /** Required `aud` of JWTs (default: unset, audience not checked). */
  OIDC_AUDIENCE: z.string().min(1).optional(),
  /**
   * Comma-separated dot paths to arrays of role names, all read and merged
   * (default `realm_access.roles,roles`; Keycloak client roles: `resource_access.<client>.roles`).
   */
  OIDC_ROLE_CLAIM: list('realm_access.roles,roles'),
  /** Dot path of the tenant claim (default `tenant`); absent means untenanted. */
  OIDC_TENANT_CLAIM: z.string().min(1).default('tenant'),
  /** Dot path of the node xname claim, read for the node role (default `xname`). */
  OIDC_XNAME_CLAIM: z.string().min(1).default('xname'),
  /** Dot path of the subject claim (default `sub`). */
  OIDC_SUBJECT_CLAIM: z.string().min(1).default('sub'),
  /** IdP role name to bootorch role (default `admin=admin,operator=operator,viewer=viewer,node=node`). */
  OIDC_ROLE_MAP: roleMap,
  /** Dev mode: reuse this admin token (`bto_<id>_<secret>`) instead of minting a new one each start (default: unset). */
  BOOTORCH_DEV_ADMIN_TOKEN: z.string().regex(API_TOKEN_RE, 'must look like bto_<16 hex>_<43 base64url>').optional(),
  /** Requests a principal may burst (default 200; 0 disables rate limiting). */
  BOOTORCH_RATE_LIMIT_BURST: z.coerce.number().int().min(0).default(200),
  /** Sustained requests per second per principal (default 50). */
  BOOTORCH_RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(50),
  /** Requests one client address may burst without a valid credential, failed authentications included (default 20). */
  BOOTORCH_RATE_LIMIT_ANON_BURST: z.coerce.number().int().min(1).default(20),
  /** Sustained requests per second per client address without a valid credential (default 2). */
  BOOTORCH_RATE_LIMIT_ANON_PER_SECOND: z.coerce.number().positive().default(2),
  /**
   * Requests one client address may burst to the routes that need no credential and skip the edge
   * (/healthz, the console's files, unknown paths), counted per API process (default 100: probes and
   * a browser's page loads fit many times over).
   */
  BOOTORCH_RATE_LIMIT_OPEN_BURST: z.coerce.number().int().min(1).default(100),
  /** Sustained requests per second per client address to those routes (default 10). */
  BOOTORCH_RATE_LIMIT_OPEN_PER_SECOND: z.coerce.number().positive().default(10),
  /** How often each API replica syncs its rate limit buckets with the others through PostgreSQL, ms (default 100). */
  BOOTORCH_RATE_LIMIT_SYNC_MS: z.coerce.number().int().min(10).max(10_000).default(100),
});

export interface AuthSettings {
  mode: AuthMode;
  issuer?: string;
  jwksUrl?: string;
  audience?: string;
  roleClaim: string[];
  tenantClaim: string;
  xnameClaim: string;
  subjectClaim: string;
  roleMap: Record<string, Role>;
  devAdminToken?: string;
  /** Per principal and per client address (anonymous); null: no rate limit. */
  rateLimit: {
    burst: number;
    perSecond: number;
    anonymous: { burst: number; perSecond: number };
    /** Per client address on the routes that need no credential and skip the edge (per process). */
    open: { burst: number; perSecond: number };
    syncMs: number;
  } | null;
}

export class AuthConfigError extends Error {}

/** Parse the auth variables; throws AuthConfigError listing every problem. */
export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env, opts: { defaultMode?: AuthMode } = {}): AuthSettings {
  const parsed = authEnvSchema.safeParse(env);
  const problems = parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  if (parsed.success) {
    const mode = parsed.data.BOOTORCH_AUTH_MODE ?? opts.defaultMode ?? 'tokens';
    if ((mode === 'oidc' || mode === 'both') && !parsed.data.OIDC_ISSUER) {
      problems.push(`  OIDC_ISSUER: required when BOOTORCH_AUTH_MODE is ${mode}`);
    }
    if (parsed.data.BOOTORCH_DEV_ADMIN_TOKEN && mode !== 'dev') {
      // A fixed, known admin token is a dev convenience; outside dev it would be a backdoor.
      problems.push(`  BOOTORCH_DEV_ADMIN_TOKEN: only allowed when BOOTORCH_AUTH_MODE is dev (it is ${mode})`);
    }
    if (problems.length === 0) {
      const e = parsed.data;
      return {
        mode,
        issuer: e.OIDC_ISSUER,
        jwksUrl: e.OIDC_JWKS_URL,
        audience: e.OIDC_AUDIENCE,
        roleClaim: e.OIDC_ROLE_CLAIM,
        tenantClaim: e.OIDC_TENANT_CLAIM,
        xnameClaim: e.OIDC_XNAME_CLAIM,
        subjectClaim: e.OIDC_SUBJECT_CLAIM,
        roleMap: e.OIDC_ROLE_MAP,
        devAdminToken: e.BOOTORCH_DEV_ADMIN_TOKEN,
        rateLimit:
          e.BOOTORCH_RATE_LIMIT_BURST === 0
            ? null
            : {
                burst: e.BOOTORCH_RATE_LIMIT_BURST,
                perSecond: e.BOOTORCH_RATE_LIMIT_PER_SECOND,
                anonymous: { burst: e.BOOTORCH_RATE_LIMIT_ANON_BURST, perSecond: e.BOOTORCH_RATE_LIMIT_ANON_PER_SECOND },
                open: { burst: e.BOOTORCH_RATE_LIMIT_OPEN_BURST, perSecond: e.BOOTORCH_RATE_LIMIT_OPEN_PER_SECOND },
                syncMs: e.BOOTORCH_RATE_LIMIT_SYNC_MS,
              },
      };
    }
  }
  throw new AuthConfigError(`bootorch: invalid auth environment:\n${problems.join('\n')}`);
}
