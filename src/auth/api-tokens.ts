/**
 * Locally issued API tokens, for sites without an identity provider and for node credentials.
 *
 * Format `bto_<id>_<secret>`: `id` (16 hex) names the row so it can be listed and revoked without
 * the secret; `secret` is 32 random bytes, base64url. Only SHA-256 of the whole token is stored. A
 * slow KDF (scrypt) would add nothing: a 256-bit random secret cannot be guessed from its hash, and
 * hashing runs on every request. The prefix lets secret scanners and the authenticator recognise it.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/client.ts';
import { databaseErrorText } from '../db/outage.ts';
import { afterCommit } from '../db/tx.ts';
import { chunks } from '../domain/lists.ts';
import { parseComponentId } from '../domain/xname.ts';
import { authFailure, type AuthFailure, type Principal, type Role } from './principal.ts';
import {
  findApiToken,
  insertApiToken,
  insertApiTokenIfAbsent,
  issueNodeTokenRows,
  listApiTokenRows,
  revokeApiTokenRow,
  type ApiTokenRow,
} from '../db/tokens.ts';
import { forgetTokens, type TokenRows } from './token-rows.ts';
import { isNodeScope, type NodeScope } from './node-scopes.ts';

export const API_TOKEN_RE = /^bto_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** A token as listed: everything but the secret and its hash. */
export interface ApiTokenInfo {
  id: string;
  role: Role;
  tenant: string | null;
  subject: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

export interface IssuedToken {
  /** The plaintext `bto_<id>_<secret>`. Shown once: only its hash is stored. */
  token: string;
  info: ApiTokenInfo;
}

export interface CreateApiTokenOptions {
  /** Node credentials come from createNodeToken, which pins the subject to a canonical xname. */
  role: Exclude<Role, 'node'>;
  /** Tenant the token acts for (default null: untenanted). */
  tenant?: string | null;
  /** Who holds it, for audit (`alice`, `ci-pipeline`). */
  subject: string;
  /** Lifetime in seconds (default: no expiry). */
  ttlSeconds?: number;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
}

export interface CreateNodeTokenOptions {
  /** Lifetime in seconds (default: no expiry; the node keeps it until re-issued or revoked). */
  ttlSeconds?: number;
  /**
   * Revoke the node's earlier tokens (default true), so re-provisioning a node rotates its
   * credential: a repeated call leaves exactly one live token per xname.
   */
  revokeExisting?: boolean;
  /** Clock (default `() => new Date()`). */
  now?: () => Date;
  /**
   * What it may do (node-scopes.ts; default none: every node call). With a scope, revokeExisting
   * revokes only the node's earlier tokens of that scope.
   */
  scope?: NodeScope;
}

const systemNow = () => new Date();

export function hashApiToken(plaintext: string): string {
  return createHash('sha256').update(plaintext, 'utf8').digest('hex');
}

/** Random bytes of a token: 8 of id, 32 of secret. */
const TOKEN_BYTES = 40;

/**
 * `n` new tokens. One randomBytes call for all of them: a call per token costs ten times more than
 * the SHA-256 of it, and the bytes are the same CSPRNG's either way.
 */
function mint(n: number): Array<{ id: string; token: string }> {
  const bytes = randomBytes(TOKEN_BYTES * n);
  return Array.from({ length: n }, (_, i) => {
    const at = i * TOKEN_BYTES;
    const id = bytes.toString('hex', at, at + 8);
    return { id, token: `bto_${id}_${bytes.toString('base64url', at + 8, at + TOKEN_BYTES)}` };
  });
}

function expiry(now: Date, ttlSeconds: number | undefined): Date | null {
  if (ttlSeconds === undefined) return null;
  if (!Number.isFinite(ttlSeconds) || ttlSeconds <= 0) throw new RangeError('ttlSeconds must be a positive number');
  return new Date(now.getTime() + ttlSeconds * 1000);
}

function info(row: ApiTokenRow): ApiTokenInfo {
  return {
    id: row.id,
    role: row.role as Role,
    tenant: row.tenant,
    subject: row.subject,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    createdAt: row.createdAt,
  };
}

export async function createApiToken(db: Db, opts: CreateApiTokenOptions): Promise<IssuedToken> {
  if ((opts.role as Role) === 'node') throw new TypeError('node tokens are issued by createNodeToken');
  if (!opts.subject.trim()) throw new TypeError('subject must not be empty');
  const now = (opts.now ?? systemNow)();
  const { id, token } = mint(1)[0]!;
  const row = await insertApiToken(db, {
    id,
    hash: hashApiToken(token),
    role: opts.role,
    tenant: opts.tenant ?? null,
    subject: opts.subject,
    expiresAt: expiry(now, opts.ttlSeconds),
    createdAt: now,
  });
  return { token, info: info(row) };
}

/** A credential for one node's reporter: role `node`, subject = canonical xname, untenanted. */
export async function createNodeToken(db: Db, xname: string, opts: CreateNodeTokenOptions = {}): Promise<IssuedToken> {
  return (await createNodeTokens(db, [xname], opts))[0]!;
}

/** Nodes per statement of createNodeTokens (each its own transaction). */
export const NODE_TOKENS_PER_TRANSACTION = 1000;

/**
 * A credential for each of these nodes (as createNodeToken), in order. Each chunk of
 * NODE_TOKENS_PER_TRANSACTION nodes is one statement (revoke the chunk's earlier tokens, insert its
 * new ones: issueNodeTokenRows), so a chunk's nodes never have zero or two live credentials, and
 * 100,000 nodes cost 100 statements. `onIssued` gets each chunk's tokens once they are stored
 * (committed, unless `db` is the caller's transaction), before the next chunk is written: a failure
 * leaves the chunks before it issued and handed over (the error says how many). An xname given twice
 * is refused, naming it.
 */
export async function createNodeTokens(
  db: Db,
  xnames: readonly string[],
  opts: CreateNodeTokenOptions & { onIssued?: (tokens: IssuedToken[]) => void } = {},
): Promise<IssuedToken[]> {
  const ids = xnames.map((x, i) => {
    const parsed = parseComponentId(x);
    if ('error' in parsed) throw new TypeError(`node token${xnames.length > 1 ? ` [${i}]` : ''}: ${parsed.error}`);
    return parsed.id;
  });
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw new TypeError(`node tokens: ${id} is given twice`);
    seen.add(id);
  }
  const now = (opts.now ?? systemNow)();
  const expiresAt = expiry(now, opts.ttlSeconds);
  const scope = opts.scope ?? null;
  const out: IssuedToken[] = [];
  for (const subjects of chunks(ids, NODE_TOKENS_PER_TRANSACTION)) {
    const minted = mint(subjects.length);
    const rows = {
      ids: minted.map((m) => m.id),
      hashes: minted.map((m) => hashApiToken(m.token)),
      subjects,
      expiresAt,
      createdAt: now,
      scope,
    };
    try {
      const revoked = await issueNodeTokenRows(db, rows, (opts.revokeExisting ?? true) ? now : undefined);
      // Forgotten by this process's caches once the revocation is visible (the NOTIFY tells the others).
      afterCommit(db, () => forgetTokens(revoked));
    } catch (e) {
      if (xnames.length <= NODE_TOKENS_PER_TRANSACTION) throw e;
      // What PostgreSQL said, not drizzle's "Failed query" with a thousand rows' parameters.
      const why = databaseErrorText(e) ?? (e instanceof Error ? e.message : String(e));
      throw new Error(`node tokens: ${out.length} of ${ids.length} issued, then: ${why}`, {
        cause: e,
      });
    }
    const issued = minted.map(
      ({ id, token }, i): IssuedToken => ({
        token,
        info: { id, role: 'node', tenant: null, subject: subjects[i]!, expiresAt, revokedAt: null, createdAt: now },
      }),
    );
    opts.onIssued?.(issued);
    out.push(...issued);
  }
  return out;
}

/**
 * Store a token whose plaintext the caller already has (dev mode reusing its admin token across
 * restarts). A repeated call with the same plaintext finds the stored row and changes nothing;
 * a different token under the same id, or a revoked one, is refused.
 */
export async function adoptApiToken(db: Db, plaintext: string, opts: Omit<CreateApiTokenOptions, 'ttlSeconds'>): Promise<ApiTokenInfo> {
  const m = API_TOKEN_RE.exec(plaintext);
  if (!m) throw new TypeError('not a bootorch API token (bto_<id>_<secret>)');
  const hash = hashApiToken(plaintext);
  const row = await insertApiTokenIfAbsent(db, {
    id: m[1]!,
    hash,
    role: opts.role,
    tenant: opts.tenant ?? null,
    subject: opts.subject,
    createdAt: (opts.now ?? systemNow)(),
  });
  if (!sameHash(row.hash, hash)) throw new Error(`API token id ${row.id} already exists with another secret`);
  if (row.revokedAt) throw new Error(`API token ${row.id} was revoked; unset it to mint a new one`);
  return info(row);
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Check a presented token; the failure says why (unknown, revoked, expired) without echoing it. */
export async function verifyApiToken(
  db: Db,
  plaintext: string,
  opts: { now?: () => Date; rows?: TokenRows } = {},
): Promise<Principal | AuthFailure> {
  const m = API_TOKEN_RE.exec(plaintext);
  if (!m) return authFailure('malformed', 'not a bootorch API token (expected bto_<id>_<secret>)');
  const id = m[1]!;
  // `rows` (token-rows.ts) batches lookups and keeps rows while the credential watch vouches for them.
  const row = opts.rows ? await opts.rows.find(id) : await findApiToken(db, id);
  // Unknown id and wrong secret read the same, so ids cannot be probed. The compare is constant-time
  // so the hash cannot be learned byte by byte from response times.
  if (!row || !sameHash(row.hash, hashApiToken(plaintext))) {
    return authFailure('unknown-token', 'API token not recognised');
  }
  if (row.revokedAt) return authFailure('revoked', `API token ${id} was revoked at ${row.revokedAt.toISOString()}`);
  const now = (opts.now ?? systemNow)();
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) {
    return authFailure('expired', `API token ${id} expired at ${row.expiresAt.toISOString()}`);
  }
  const role = row.role as Role;
  return {
    subject: row.subject,
    role,
    tenant: row.tenant,
    via: 'api-token',
    tokenId: id,
    ...(role === 'node' ? { node: row.subject } : {}),
    ...(role === 'node' && isNodeScope(row.scope) ? { scope: row.scope } : {}),
    ...(row.expiresAt ? { expiresAt: row.expiresAt } : {}),
  };
}

/** True when a live token was revoked now; false if unknown or already revoked (a repeated call changes nothing). */
export async function revokeApiToken(db: Db, id: string, opts: { now?: () => Date } = {}): Promise<boolean> {
  const revoked = await revokeApiTokenRow(db, id, (opts.now ?? systemNow)());
  forgetTokens([id]);
  return revoked;
}

/** Tokens without secrets or hashes, oldest first; revoked ones only when asked (default false). */
export async function listApiTokens(db: Db, opts: { includeRevoked?: boolean } = {}): Promise<ApiTokenInfo[]> {
  return (await listApiTokenRows(db, { includeRevoked: opts.includeRevoked ?? false })).map(info);
}
