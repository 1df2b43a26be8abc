/**
 * Identity, token and tenant administration (schema/auth.graphql). Who may call each field is decided
 * before these run (src/api/auth.ts, POLICY); here: validate, call src/auth or the tenant SQL, shape.
 */
import { z } from 'zod';
import { createApiToken, createNodeToken, isAuthFailure, listApiTokens, revokeApiToken, type ApiTokenInfo } from '../../auth/index.ts';
import { findApiToken } from '../../db/tokens.ts';
import { deleteTenantXnames, listTenants, replaceTenantXnames, tenantExists } from '../../db/tenants.ts';
import { transaction } from '../../db/tx.ts';
import { checkComponentIds } from '../../domain/components.ts';
import { check, nameSchema, text } from '../../domain/validation.ts';
import { isNodeXname, parseComponentId } from '../../domain/xname.ts';
import { badInput, conflict, notFound, valueOrThrow } from '../errors.ts';
import type { ApiContext } from '../context.ts';
import type { ApiToken, Resolvers, Role } from '../generated/types.ts';

/** Ten years: a longer-lived credential is a mistake, not a policy. */
const MAX_TTL = 10 * 365 * 24 * 3600;
const ttlSchema = z
  .number()
  .int('must be a whole number of seconds')
  .min(1, 'must be at least 1')
  .max(MAX_TTL, `must be at most ${MAX_TTL}`);
const subjectSchema = text(1, 127)
  .regex(/^[^\p{Cc}\p{Cs}]+$/u, 'must not contain control characters')
  .refine((s) => s.trim() !== '', 'must not be blank');
const tokenIdSchema = z.string().regex(/^[0-9a-f]{16}$/, 'is not an API token id (16 hex digits)');
const tenantName = (v: unknown, field: string) => valueOrThrow(check(nameSchema, v, field));

const ttl = (v: number | null | undefined, field = 'ttlSeconds') => (v == null ? undefined : valueOrThrow(check(ttlSchema, v, field)));

const tokenView = (t: ApiTokenInfo): ApiToken => ({
  id: t.id,
  role: t.role.toUpperCase() as Role,
  tenant: t.tenant,
  subject: t.subject,
  expiresAt: t.expiresAt,
  revokedAt: t.revokedAt,
  createdAt: t.createdAt,
});

function principalOf(ctx: ApiContext) {
  const p = ctx.auth?.principal;
  // Unreachable past the authorization check (whoami needs a credential); kept as an invariant.
  if (!p || isAuthFailure(p)) throw new Error('whoami without a principal');
  return p;
}

export const authResolvers: Resolvers = {
  Query: {
    whoami: (_p, _a, ctx) => {
      const p = principalOf(ctx);
      return {
        subject: p.subject,
        role: p.role.toUpperCase() as Role,
        tenant: ctx.tenant,
        credentialTenant: p.tenant,
        node: p.node ?? null,
        via: p.via.toUpperCase().replace('-', '_'),
        tokenId: p.tokenId ?? null,
        actor: ctx.actor,
      };
    },
    apiTokens: async (_p, { includeRevoked }, ctx) =>
      (await listApiTokens(ctx.db, { includeRevoked: includeRevoked ?? false })).map(tokenView),
    tenants: async (_p, _a, ctx) => (await listTenants(ctx.db)).map((t) => ({ name: t.tenant, xnames: t.xnames })),
  },
  Mutation: {
    createApiToken: async (_p, args, ctx) => {
      const subject = valueOrThrow(check(subjectSchema, args.subject, 'subject'));
      const ttlSeconds = ttl(args.ttlSeconds);
      const tenant = args.tenant == null ? null : tenantName(args.tenant, 'tenant');
      if (tenant !== null && !(await tenantExists(ctx.db, tenant))) {
        throw badInput([{ field: 'tenant', message: `unknown tenant "${tenant}" (it owns no xnames; see setTenantXnames)` }]);
      }
      const role = args.role.toLowerCase() as 'admin' | 'operator' | 'viewer';
      const issued = await createApiToken(ctx.db, { role, subject, tenant, ttlSeconds, now: ctx.now });
      return { token: issued.token, info: tokenView(issued.info) };
    },
    createNodeToken: async (_p, args, ctx) => {
      const parsed = parseComponentId(args.xname);
      if ('error' in parsed) throw badInput([{ field: 'xname', message: parsed.error }]);
      if (!isNodeXname(parsed.id)) throw badInput([{ field: 'xname', message: `${parsed.id} is not a node xname (e.g. x3000c0s19b1n0)` }]);
      const issued = await createNodeToken(ctx.db, parsed.id, { ttlSeconds: ttl(args.ttlSeconds), now: ctx.now });
      return { token: issued.token, info: tokenView(issued.info) };
    },
    revokeApiToken: async (_p, args, ctx) => {
      const id = valueOrThrow(check(tokenIdSchema, args.id, 'id'));
      if (!(await findApiToken(ctx.db, id))) throw notFound('API token', id);
      return revokeApiToken(ctx.db, id, { now: ctx.now });
    },
    setTenantXnames: async (_p, args, ctx) => {
      const tenant = tenantName(args.tenant, 'tenant');
      const xnames = valueOrThrow(checkComponentIds(args.xnames, 'xnames', 65535));
      if (xnames.length === 0)
        throw badInput([{ field: 'xnames', message: 'must name at least one xname (deleteTenant removes a tenant)' }]);
      const r = await transaction(ctx.db, (tx) => replaceTenantXnames(tx, tenant, xnames));
      if (!r.ok) {
        const first = r.taken[0]!;
        const i = args.xnames.findIndex((x) => {
          const p = parseComponentId(x);
          return !('error' in p) && p.id === first.xname;
        });
        const more = r.taken.length > 1 ? ` (and ${r.taken.length - 1} more)` : '';
        throw conflict(`${first.xname} belongs to tenant "${first.tenant}"${more}; an xname belongs to at most one tenant`, `xnames[${i}]`);
      }
      return { name: tenant, xnames: [...xnames].sort() };
    },
    deleteTenant: async (_p, args, ctx) => {
      const tenant = tenantName(args.tenant, 'tenant');
      if (!(await transaction(ctx.db, (tx) => deleteTenantXnames(tx, tenant)))) throw notFound('tenant', tenant);
      return true;
    },
  },
};
