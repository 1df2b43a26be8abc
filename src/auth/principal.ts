/**
 * Who is calling: the one shape every credential (OIDC JWT, local API token, dev token) becomes,
 * and the one shape every failed authentication becomes. Resolvers only ever see these two.
 */
import type { NodeScope } from './node-scopes.ts';

/** Human roles form a ladder (viewer < operator < admin); `node` stands beside it, not on it. */
export const ROLES = ['viewer', 'operator', 'admin', 'node'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** Stable identity: the JWT subject, the API token's subject, or the node's xname. */
  subject: string;
  role: Role;
  /** The tenant the credential is pinned to; null means untenanted (the admin context of BOS). */
  tenant: string | null;
  /** Canonical xname, only for role `node`: the one component this credential may report for. */
  node?: string;
  /** Only for role `node`, minted from a boot ticket: what it may do (node-scopes.ts). Absent: every node call. */
  scope?: NodeScope;
  via: 'jwt' | 'api-token' | 'dev';
  /** Id of the local API token, when `via` is `api-token` or `dev` (for audit and revocation). */
  tokenId?: string;
  /** When the credential stops being valid (a JWT's exp, an API token's expiry); absent: no end set. */
  expiresAt?: Date;
}

/**
 * Why a credential was not accepted. Each is a distinct reason so that logs and the error's
 * `extensions.reason` say what to fix; none of them echoes the credential itself.
 */
export type AuthFailureReason =
  | 'missing' // no Authorization header
  | 'malformed' // not "Bearer <token>", or a token of neither known shape
  | 'not-accepted' // a JWT where only API tokens are accepted, or the other way round
  | 'unknown-token' // API token id not found, or its secret does not match
  | 'revoked'
  | 'expired'
  | 'not-yet-valid' // JWT nbf in the future
  | 'bad-signature'
  | 'unknown-key' // JWT kid not in the issuer's key set
  | 'wrong-issuer'
  | 'wrong-audience'
  | 'invalid-claims' // claims present but unusable (no subject, node role without xname, ...)
  | 'no-role' // valid token that maps to no bootorch role
  | 'idp-unavailable'; // the issuer's JWKS could not be fetched: not the caller's fault

export interface AuthFailure {
  failure: AuthFailureReason;
  /** One sentence for the caller and the log. */
  message: string;
}

export function authFailure(failure: AuthFailureReason, message: string): AuthFailure {
  return { failure, message };
}

export function isAuthFailure(x: Principal | AuthFailure): x is AuthFailure {
  return 'failure' in x;
}

const RANK: Record<Exclude<Role, 'node'>, number> = { viewer: 1, operator: 2, admin: 3 };

/** True when `role` is at or above `min` on the human ladder; a node is never on it. */
export function roleAtLeast(role: Role, min: Exclude<Role, 'node'>): boolean {
  return role !== 'node' && RANK[role] >= RANK[min];
}

/** The highest human role among `roles`, else `node` if present, else null. */
export function highestRole(roles: Iterable<Role>): Role | null {
  let best: Role | null = null;
  for (const r of roles) {
    if (r === 'node') {
      if (best === null) best = 'node';
      continue;
    }
    if (best === null || best === 'node' || RANK[r] > RANK[best]) best = r;
  }
  return best;
}
