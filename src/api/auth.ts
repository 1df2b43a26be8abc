/**
 * Auth in the API. `authIdentify` turns a request's Authorization header into a Principal (through
 * src/auth's authenticator) and settles which tenant it acts for; `applyAuthorization` puts one check
 * in front of every root field of the schema (Query, Mutation and Subscription alike), so a resolver
 * cannot forget it and a field nobody classified is admin-only (POLICY fails closed).
 *
 * A request without a usable credential still gets a context: public fields (version, health) answer
 * it, and every other field explains why it was refused (UNAUTHENTICATED with the failure's reason).
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { defaultFieldResolver, GraphQLError, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { Logger } from 'pino';
import {
  authFailure,
  authFailureError,
  authorize,
  authzError,
  createAuthenticator,
  createRateLimiter,
  isAuthFailure,
  loadAuthConfig,
  POLICY,
  resolveTenant,
  type AuthFailure,
  type Authenticator,
  type AuthMode,
  type OperationPolicy,
  type Principal,
  type RateLimiter,
} from '../auth/index.ts';
import { createSharedRateLimiter, type RateLimitStore } from '../auth/shared-rate-limit.ts';
import type { Db } from '../db/client.ts';
import { pruneBuckets, syncBuckets } from '../db/rate-limits.ts';
import type { ApiContext, Identify, Identity, RequestAuth } from './context.ts';
import { isDatabaseUnavailable } from './unavailable.ts';
import { assertStorable } from './input-errors.ts';

/** What the server needs to authenticate requests. */
export interface ApiAuth {
  authenticator: Authenticator;
  /**
   * The rate limit (default: none), taken once per request before the document is even parsed
   * (src/api/edge.ts): per principal, and per client address for requests without a valid credential.
   */
  limiter?: RateLimiter;
  /**
   * The per-address limit of routes that need no credential and skip the edge (/healthz, the
   * console, unknown paths; edge.ts limitOpen). In this process's memory, not shared: each replica
   * answers its own probes, and a probe must not become a database write.
   */
  openLimiter?: RateLimiter;
}

export type { RequestAuth };

/** What a principal's writes record as the actor: `node:<xname>` for node credentials, else the subject. */
export function actorOf(p: Principal): string {
  return p.role === 'node' ? `node:${p.node ?? p.subject}` : p.subject.slice(0, 127);
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
};

/**
 * Identify from `Authorization` (over graphql-ws, the connection_init payload's `authorization`, which
 * context.ts's withConnectionParams folds into the headers) and `Cray-Tenant-Name`. The header
 * `x-bootorch-actor` is ignored: the actor comes from the credential, or anyone could write as anyone.
 */
export function authIdentify(auth: ApiAuth): Identify {
  return async ({ headers }): Promise<Identity> => {
    const asked = header(headers, 'cray-tenant-name') ?? null;
    let principal: Principal | AuthFailure;
    try {
      principal = await auth.authenticator.authenticate(header(headers, 'authorization'));
    } catch (e) {
      // API tokens are looked up in the database: when it is down, say so (503), not "bad token".
      principal = authFailure(
        'idp-unavailable',
        isDatabaseUnavailable(e) ? 'the token store (database) is unavailable' : 'the credential could not be checked',
      );
    }
    if (isAuthFailure(principal)) return { actor: 'anonymous', tenant: null, auth: { principal } };
    const actor = actorOf(principal);
    const t = resolveTenant(principal, asked);
    if (!t.ok) return { actor, tenant: principal.tenant, auth: { principal, tenantRefusal: authzError(t) } };
    return { actor, tenant: t.tenant, auth: { principal } };
  };
}

/** Throws the refusal for this root field (the rate limit was taken at the edge, once per request). */
export function checkField(
  ctx: Pick<ApiContext, 'auth'>,
  field: string,
  args: Record<string, unknown>,
  policy: Readonly<Record<string, OperationPolicy>> = POLICY,
): void {
  if (Object.hasOwn(policy, field) && policy[field]!.min === 'public') return; // no credential needed: nothing to refuse or count
  const who = ctx.auth?.principal ?? null;
  const r = authorize(who, field, args, policy);
  if (!r.ok) {
    // A rejected credential says why (expired, revoked, idp-unavailable...), not just "no credential".
    if (r.code === 'UNAUTHENTICATED' && who && isAuthFailure(who)) throw authFailureError(who);
    throw authzError(r);
  }
  if (!who || isAuthFailure(who)) return; // unreachable: authorize refuses these on non-public fields
  if (ctx.auth?.tenantRefusal) throw ctx.auth.tenantRefusal;
}

/** Contexts whose subscription went through `subscribe` (graphql-ws); see applyAuthorization. */
const subscribed = new WeakSet<object>();

/** A subscription field resolved without its `subscribe` (the operation sent over plain HTTP). */
function notOverHttp(): GraphQLError {
  return new GraphQLError('subscriptions are served over graphql-ws (a WebSocket on this same URL), not over HTTP', {
    extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
  });
}

/**
 * Wrap every root field's resolver (subscriptions: their `subscribe`) with checkField, in place, and
 * with the input check every field gets (input-errors.ts). Mutations also leave an audit line (actor,
 * tenant, field, outcome) in the log.
 */
export function applyAuthorization(schema: GraphQLSchema, policy: Readonly<Record<string, OperationPolicy>> = POLICY): GraphQLSchema {
  const mutation = schema.getMutationType();
  const subscription = schema.getSubscriptionType();
  for (const type of [schema.getQueryType(), mutation, subscription]) {
    if (!type) continue;
    for (const field of Object.values(type.getFields())) {
      const name = field.name;
      if (type === subscription) {
        const subscribe = field.subscribe ?? defaultFieldResolver;
        field.subscribe = (src, args, ctx: ApiContext, info) => {
          checkField(ctx, name, args, policy);
          assertStorable(args);
          subscribed.add(ctx);
          return subscribe(src, args, ctx, info);
        };
        // `resolve` maps each event of the stream; run any other way (a subscription sent as an HTTP
        // POST is executed, not subscribed) it would skip the check above, so it refuses. The edge
        // refuses such requests first; this is the second lock.
        const resolve: GraphQLFieldResolver<unknown, ApiContext> = field.resolve ?? defaultFieldResolver;
        field.resolve = (src, args, ctx: ApiContext, info) => {
          if (!subscribed.has(ctx)) throw notOverHttp();
          return resolve(src, args, ctx, info);
        };
        continue;
      }
      const resolve: GraphQLFieldResolver<unknown, ApiContext> = field.resolve ?? defaultFieldResolver;
      field.resolve =
        type === mutation
          ? async (src, args, ctx: ApiContext, info) => {
              try {
                checkField(ctx, name, args, policy);
                assertStorable(args);
                const out = await resolve(src, args, ctx, info);
                audit(ctx, name, 'ok');
                return out;
              } catch (e) {
                audit(ctx, name, e instanceof GraphQLError ? String(e.extensions.code ?? 'ERROR') : 'INTERNAL');
                throw e;
              }
            }
          : (src, args, ctx: ApiContext, info) => {
              checkField(ctx, name, args, policy);
              assertStorable(args);
              return resolve(src, args, ctx, info);
            };
    }
  }
  return schema;
}

function audit(ctx: ApiContext, field: string, outcome: string): void {
  const p = ctx.auth?.principal;
  const node = p && !isAuthFailure(p) && p.role === 'node' ? p : undefined;
  // A node's own calls (its boot report, its deploy heartbeats) are thousands per reboot: debug, not the
  // audit trail of people; a line about the node names it (`xname`). Checked first: debug off costs nothing.
  const level = node ? 'debug' : 'info';
  if (!ctx.logger?.isLevelEnabled(level)) return;
  ctx.logger[level](
    {
      audit: { field, outcome, actor: ctx.actor, tenant: ctx.tenant, tokenId: p && !isAuthFailure(p) ? p.tokenId : undefined },
      ...(node?.node ? { xname: node.node } : {}),
    },
    `mutation ${field}: ${outcome}`,
  );
}

/**
 * The API's auth from the environment (src/auth/config.ts: BOOTORCH_AUTH_MODE, OIDC_*, rate limits).
 * Throws AuthConfigError listing every problem. In dev mode the admin token is kept in `devTokenFile`
 * (0600), reused across restarts, so that a CLI on the same machine can read it.
 */
export async function apiAuthFromEnv(
  db: Db,
  o: {
    defaultMode: AuthMode;
    devTokenFile?: string;
    env?: NodeJS.ProcessEnv;
    /** Where the shared rate limit keeps its buckets (default: the rate_limits table through `db`). */
    store?: RateLimitStore;
    logger?: Logger;
  },
): Promise<ApiAuth> {
  const cfg = loadAuthConfig(o.env ?? process.env, { defaultMode: o.defaultMode });
  const authenticator = await createAuthenticator({ ...cfg, devTokenFile: cfg.mode === 'dev' ? o.devTokenFile : undefined }, db);
  if (authenticator.devAdminToken && o.devTokenFile) await saveToken(o.devTokenFile, authenticator.devAdminToken);
  return {
    authenticator,
    limiter: cfg.rateLimit ? createSharedRateLimiter({ ...cfg.rateLimit, store: o.store ?? dbStore(db), logger: o.logger }) : undefined,
    openLimiter: cfg.rateLimit ? createRateLimiter({ anonymous: cfg.rateLimit.open }) : undefined,
  };
}

/** The rate limit buckets in PostgreSQL (src/db/rate-limits.ts). */
export function dbStore(db: Db): RateLimitStore {
  return { sync: (uses) => syncBuckets(db, uses), prune: () => pruneBuckets(db) };
}

/** Write `token` to `file` (0600) unless it already holds it. */
async function saveToken(file: string, token: string): Promise<void> {
  const held = await readFile(file, 'utf8').then(
    (t) => t.trim(),
    () => '',
  );
  if (held === token) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
