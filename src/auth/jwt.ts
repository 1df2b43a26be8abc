/**
 * OIDC access tokens (CSM's Keycloak, or any OIDC provider) verified with `jose`, and their claims
 * mapped to a Principal. Signature, issuer, expiry and (optionally) audience are checked by jose;
 * the claim mapping below is ours and pure, so it is table-tested without keys.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWSAlgorithm,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { z } from 'zod';
import { canonicalXname, isXname } from '../domain/xname.ts';
import { authFailure, highestRole, type AuthFailure, type Principal, type Role } from './principal.ts';

export interface ClaimMapping {
  /** Dot paths to arrays (or a space-separated string) of IdP role names, merged (default `realm_access.roles`, `roles`). */
  roleClaim?: string | string[];
  /** IdP role name to bootorch role (default: admin, operator, viewer and node map to themselves). */
  roleMap?: Record<string, Role>;
  /** Dot path of the tenant (default `tenant`). */
  tenantClaim?: string;
  /** Dot path of a node token's xname (default `xname`). */
  xnameClaim?: string;
  /** Dot path of the subject (default `sub`). */
  subjectClaim?: string;
}

export interface JwtVerifierOptions extends ClaimMapping {
  /** Exact expected `iss`. */
  issuer: string;
  /** JWKS URL, fetched and cached by jose (default: `jwks_uri` from the issuer's discovery document). */
  jwksUrl?: string;
  /** A local key set instead of a URL (tests, air-gapped sites); wins over `jwksUrl`. */
  jwks?: JSONWebKeySet;
  /** Required `aud` (default: not checked). */
  audience?: string | string[];
  /** Allowed clock skew in seconds for exp/nbf (default 30). */
  clockToleranceSeconds?: number;
  /** Accepted signature algorithms (default: RS*, PS*, ES*, EdDSA; never HS* or none). */
  algorithms?: JWSAlgorithm[];
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
  /** fetch for the discovery document (default global fetch). */
  fetch?: typeof fetch;
}

export interface JwtVerifier {
  verify(token: string): Promise<Principal | AuthFailure>;
}

// Symmetric algorithms are excluded: a JWKS is public, so an HS* key in it would let anyone sign.
const ASYMMETRIC: JWSAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const DEFAULT_ROLE_MAP: Record<string, Role> = { admin: 'admin', operator: 'operator', viewer: 'viewer', node: 'node' };

/** Rough shape of a JWT, to tell it from an API token before verifying. */
export const JWT_SHAPE_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export function createJwtVerifier(opts: JwtVerifierOptions): JwtVerifier {
  const now = opts.now ?? (() => new Date());
  const keys = keySet(opts);
  return {
    async verify(token) {
      if (!JWT_SHAPE_RE.test(token)) return authFailure('malformed', 'not a JWT');
      let payload: JWTPayload;
      try {
        const getKey = await keys();
        ({ payload } = await jwtVerify(token, getKey, {
          issuer: opts.issuer,
          audience: opts.audience,
          algorithms: opts.algorithms ?? ASYMMETRIC,
          clockTolerance: opts.clockToleranceSeconds ?? 30,
          currentDate: now(),
          // A token without exp would be valid forever; the IdP always sets one.
          requiredClaims: ['exp'],
        }));
      } catch (e) {
        return jwtFailure(e, opts.issuer);
      }
      const p = claimsToPrincipal(payload, opts);
      return 'failure' in p || typeof payload.exp !== 'number' ? p : { ...p, expiresAt: new Date(payload.exp * 1000) };
    },
  };
}

/** Claims of an already verified token to a Principal; pure. */
export function claimsToPrincipal(payload: JWTPayload, m: ClaimMapping = {}): Principal | AuthFailure {
  const subject = claimAt(payload, m.subjectClaim ?? 'sub');
  if (typeof subject !== 'string' || !subject) return authFailure('invalid-claims', `token has no ${m.subjectClaim ?? 'sub'} claim`);

  const roleMap = m.roleMap ?? DEFAULT_ROLE_MAP;
  const paths = typeof m.roleClaim === 'string' ? [m.roleClaim] : (m.roleClaim ?? ['realm_access.roles', 'roles']);
  const granted: Role[] = [];
  for (const p of paths) {
    for (const name of roleNames(claimAt(payload, p))) {
      // Own-property lookup: a role named "constructor" must not reach Object.prototype.
      if (Object.hasOwn(roleMap, name)) granted.push(roleMap[name]!);
    }
  }
  const role = highestRole(granted);
  if (!role) return authFailure('no-role', `token grants no bootorch role (looked in ${paths.join(', ')})`);

  const tenantClaim = m.tenantClaim ?? 'tenant';
  const rawTenant = claimAt(payload, tenantClaim);
  if (rawTenant !== undefined && rawTenant !== null && typeof rawTenant !== 'string') {
    return authFailure('invalid-claims', `claim ${tenantClaim} must be a string`);
  }
  const tenant = rawTenant ? rawTenant : null;

  if (role !== 'node') return { subject, role, tenant, via: 'jwt' };
  const xnameClaim = m.xnameClaim ?? 'xname';
  const raw = claimAt(payload, xnameClaim);
  const node = typeof raw === 'string' ? canonicalXname(raw) : '';
  if (!isXname(node)) return authFailure('invalid-claims', `node token needs a valid xname in claim ${xnameClaim}`);
  return { subject, role, tenant, node, via: 'jwt' };
}

/** Value at a dot path (`resource_access.bootorch.roles`); undefined when any step is missing. */
export function claimAt(payload: unknown, path: string): unknown {
  let v: unknown = payload;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function roleNames(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return v.split(/\s+/).filter(Boolean); // scope-style "admin viewer"
  return [];
}

function jwtFailure(e: unknown, issuer: string): AuthFailure {
  if (e instanceof DiscoveryError) return authFailure('idp-unavailable', e.message);
  if (e instanceof errors.JWTExpired) return authFailure('expired', `token expired (${e.message})`);
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'iss') {
      const got = typeof e.payload.iss === 'string' ? `"${e.payload.iss.slice(0, 200)}"` : 'none';
      return authFailure('wrong-issuer', `token issuer ${got} is not the configured issuer "${issuer}"`);
    }
    if (e.claim === 'aud') return authFailure('wrong-audience', 'token audience does not include this service');
    if (e.claim === 'nbf') return authFailure('not-yet-valid', 'token is not valid yet (nbf)');
    return authFailure('invalid-claims', `token claim check failed: ${e.message}`);
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return authFailure('bad-signature', 'token signature does not verify');
  if (e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys) {
    return authFailure('unknown-key', "no key in the issuer's key set matches the token (kid/alg)");
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return authFailure('malformed', `token algorithm not allowed (${e.message})`);
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid || e instanceof errors.JOSENotSupported) {
    return authFailure('malformed', `invalid token: ${e.message}`);
  }
  // Everything else is the key set fetch: timeout, HTTP error, unreachable, invalid JWKS.
  const why = e instanceof Error ? e.message : String(e);
  return authFailure('idp-unavailable', `cannot get the issuer's signing keys: ${why}`);
}

class DiscoveryError extends Error {}

const discoverySchema = z.object({ issuer: z.string(), jwks_uri: z.url() });

/**
 * The key getter: local set, given URL, or the URL from OIDC discovery. Discovery runs on first use
 * and is retried on the next request if it failed, so an IdP that is down at start-up does not
 * need a bootorch restart once it is back.
 */
function keySet(opts: JwtVerifierOptions): () => Promise<JWTVerifyGetKey> {
  if (opts.jwks) {
    const local = createLocalJWKSet(opts.jwks);
    return async () => local;
  }
  if (opts.jwksUrl) {
    const remote = createRemoteJWKSet(new URL(opts.jwksUrl));
    return async () => remote;
  }
  let pending: Promise<JWTVerifyGetKey> | undefined;
  return () => {
    pending ??= discoverJwksUrl(opts.issuer, opts.fetch ?? fetch)
      .then((url) => createRemoteJWKSet(new URL(url)))
      .catch((e) => {
        pending = undefined;
        throw e;
      });
    return pending;
  };
}

export async function discoverJwksUrl(issuer: string, fetchFn: typeof fetch = fetch): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  try {
    const res = await fetchFn(url, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const doc = discoverySchema.parse(await res.json());
    // The discovery document must be the issuer's own; otherwise its keys prove nothing.
    if (doc.issuer !== issuer) throw new Error(`it names issuer "${doc.issuer}"`);
    return doc.jwks_uri;
  } catch (e) {
    throw new DiscoveryError(`OIDC discovery at ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}
