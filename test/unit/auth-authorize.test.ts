import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { assertNodeMayReport, authorize, AuthzError, POLICY, resolveTenant, type OperationPolicy } from '../../src/auth/authorize.ts';
import { authFailureError, authzError, throwUnlessOk } from '../../src/auth/errors.ts';
import { authFailure, ROLES, type Principal, type Role } from '../../src/auth/principal.ts';

const who = (role: Role, tenant: string | null = null, node?: string): Principal => ({
  subject: node ?? `${role}-user`,
  role,
  tenant,
  via: 'api-token',
  ...(node ? { node } : {}),
});

const NODE = 'x1000c0s0b0n0';

/** The rule, written out independently of authorize(): what each caller may do with each policy. */
function expected(p: OperationPolicy, caller: Principal | null, args: Record<string, unknown>): boolean {
  if (p.min === 'public') return true;
  if (!caller) return false;
  if (caller.role === 'node') {
    if (p.node === 'self') return true;
    if (p.node && typeof p.node === 'object') return args[p.node.xnameArg] === caller.node;
    return false;
  }
  const ladder = ['viewer', 'operator', 'admin'];
  if (ladder.indexOf(caller.role) < ladder.indexOf(p.min)) return false;
  return !(p.systemOnly && caller.tenant !== null);
}

const callers: Array<[string, Principal | null]> = [
  ['anonymous', null],
  ...ROLES.filter((r) => r !== 'node').flatMap(
    (r): Array<[string, Principal]> => [
      [r, who(r)],
      [`${r}@tenant-a`, who(r, 'tenant-a')],
    ],
  ),
  ['node', who('node', null, NODE)],
];
const argVariants: Array<[string, Record<string, unknown>]> = [
  ['own xname', { id: NODE }],
  ['other xname', { id: 'x1000c0s0b0n1' }],
  ['no args', {}],
];

describe('policy table: every caller × every operation', () => {
  const rows = Object.entries(POLICY).flatMap(([op, p]) =>
    callers.flatMap(([name, caller]) => argVariants.map(([argName, args]) => ({ op, p, name, caller, argName, args }))),
  );

  it.each(rows)('$op by $name ($argName)', ({ op, p, caller, args }) => {
    const r = authorize(caller, op, args);
    expect(r.ok).toBe(expected(p, caller, args));
    if (!r.ok) expect(r.code).toBe(caller ? 'FORBIDDEN' : 'UNAUTHENTICATED');
  });
});

describe('the classes of operation the brief names', () => {
  const allowed = (op: string, args: Record<string, unknown> = {}) => callers.filter(([, c]) => authorize(c, op, args).ok).map(([n]) => n);

  it('queries: viewer and up, tenants included; nodes not', () => {
    for (const op of ['sessions', 'sessionTemplates', 'components', 'options', 'sessionStatus']) {
      expect(allowed(op)).toEqual(['viewer', 'viewer@tenant-a', 'operator', 'operator@tenant-a', 'admin', 'admin@tenant-a']);
    }
  });

  it('template, session and component mutations: operator and up', () => {
    for (const op of ['putSessionTemplate', 'patchSessionTemplate', 'createSession', 'deleteSessions', 'patchComponents', 'applyStaged']) {
      expect(allowed(op)).toEqual(['operator', 'operator@tenant-a', 'admin', 'admin@tenant-a']);
    }
  });

  it('options writes, token and tenant admin: untenanted admin only', () => {
    for (const op of ['patchOptions', 'createApiToken', 'createNodeToken', 'revokeApiToken', 'apiTokens', 'setTenantXnames']) {
      expect(allowed(op)).toEqual(['admin']);
    }
  });

  it('reportBootState: a node for its own xname, and operators', () => {
    expect(allowed('reportBootState', { id: NODE })).toEqual(['operator', 'operator@tenant-a', 'admin', 'admin@tenant-a', 'node']);
    expect(allowed('reportBootState', { id: 'x1000c0s0b0n1' })).not.toContain('node');
  });

  it('public fields need no credential', () => {
    expect(allowed('version')).toHaveLength(callers.length);
  });
});

describe('authorize edge cases', () => {
  it('fails closed for unknown operations, including prototype names', () => {
    for (const op of ['somethingNew', 'constructor', '__proto__', 'toString']) {
      expect(authorize(who('operator'), op).ok).toBe(false);
      expect(authorize(who('admin', 'tenant-a'), op).ok).toBe(false);
      expect(authorize(who('admin'), op).ok).toBe(true);
      expect(authorize(null, op)).toMatchObject({ ok: false, code: 'UNAUTHENTICATED' });
    }
  });

  it('passes an authentication failure through as UNAUTHENTICATED with its message', () => {
    const r = authorize(authFailure('expired', 'API token abc expired at 2030-01-01'), 'sessions');
    expect(r).toEqual({ ok: false, code: 'UNAUTHENTICATED', reason: 'API token abc expired at 2030-01-01' });
    expect(authorize(authFailure('missing', 'none'), 'health').ok).toBe(true);
  });

  it('compares node xnames canonically and reads nested arguments', () => {
    const node = who('node', null, NODE);
    expect(authorize(node, 'reportBootState', { id: 'X1000c0s00b0n0' }).ok).toBe(true);
    const policy = { report: { kind: 'mutation', min: 'operator', node: { xnameArg: 'input.xname' } } } as const;
    expect(authorize(node, 'report', { input: { xname: NODE } }, policy).ok).toBe(true);
    expect(authorize(node, 'report', { input: { xname: 'x1c0s0b0n0' } }, policy).ok).toBe(false);
    expect(authorize(node, 'whoami').ok).toBe(true);
  });

  it('assertNodeMayReport throws FORBIDDEN for a foreign xname or a viewer', () => {
    const node = who('node', null, NODE);
    expect(() => assertNodeMayReport(node, NODE)).not.toThrow();
    expect(() => assertNodeMayReport(who('operator'), 'x1c0s0b0n0')).not.toThrow();
    for (const [p, x] of [
      [node, 'x1000c0s0b0n1'],
      [who('viewer'), NODE],
      [who('node'), NODE],
    ] as const) {
      expect(() => assertNodeMayReport(p, x)).toThrow(AuthzError);
      try {
        assertNodeMayReport(p, x);
      } catch (e) {
        expect((e as AuthzError).code).toBe('FORBIDDEN');
      }
    }
  });
});

describe('resolveTenant (Cray-Tenant-Name against the credential)', () => {
  it.each([
    ['untenanted, no header: all tenants', null, undefined, { ok: true, tenant: null }],
    ['untenanted, header: that tenant', null, 'vc-b', { ok: true, tenant: 'vc-b' }],
    ['untenanted, blank header: none', null, '  ', { ok: true, tenant: null }],
    ['tenant, no header: pinned', 'vc-a', undefined, { ok: true, tenant: 'vc-a' }],
    ['tenant, same header', 'vc-a', 'vc-a', { ok: true, tenant: 'vc-a' }],
    ['tenant, other header: refused', 'vc-a', 'vc-b', { ok: false, code: 'FORBIDDEN' }],
  ])('%s', (_n, tenant, header, out) => {
    expect(resolveTenant(who('operator', tenant), header)).toMatchObject(out);
  });
});

describe('the SDL and the table agree', () => {
  // Every root field in schema/ must be classified; an unclassified one is admin-only at run time,
  // which is safe but almost never what its author meant.
  const dir = path.resolve(import.meta.dirname, '../../schema');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.graphql')) : [];
  it.skipIf(files.length === 0)('every Query, Mutation and Subscription field has a policy', () => {
    const fields: string[] = [];
    for (const f of files) {
      for (const def of parse(readFileSync(path.join(dir, f), 'utf8')).definitions) {
        if (
          (def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION) &&
          ['Query', 'Mutation', 'Subscription'].includes(def.name.value)
        ) {
          fields.push(...(def.fields ?? []).map((fd) => `${def.name.value}.${fd.name.value}`));
        }
      }
    }
    expect(fields.length).toBeGreaterThan(0);
    const kinds = { Query: 'query', Mutation: 'mutation', Subscription: 'subscription' } as const;
    const unclassified = fields.filter((f) => !Object.hasOwn(POLICY, f.split('.')[1]!));
    expect(unclassified, 'add these to POLICY in src/auth/authorize.ts').toEqual([]);
    // A name under two root types (componentEvents: a paged Query and a Subscription) has one policy
    // for both, as authorize() is keyed by the root field's name; its kind is then not checked.
    const shared = new Set(fields.map((f) => f.split('.')[1]!).filter((n, i, a) => a.indexOf(n) !== i));
    const wrongKind = fields.filter((f) => {
      const [type, name] = f.split('.') as [keyof typeof kinds, string];
      return !shared.has(name) && POLICY[name]!.kind !== kinds[type];
    });
    expect(wrongKind).toEqual([]);
  });
});

describe('GraphQLErrors for refusals', () => {
  const status = (e: { extensions: Record<string, unknown> }) => (e.extensions.http as { status: number }).status;
  it('maps codes to statuses', () => {
    const forbidden = authorize(who('viewer'), 'createSession');
    const anon = authorize(null, 'createSession');
    if (forbidden.ok || anon.ok) throw new Error('expected refusals');
    expect([authzError(forbidden).extensions.code, status(authzError(forbidden))]).toEqual(['FORBIDDEN', 403]);
    expect([authzError(anon).extensions.code, status(authzError(anon))]).toEqual(['UNAUTHENTICATED', 401]);
    const down = authFailureError(authFailure('idp-unavailable', 'JWKS timeout'));
    expect([down.extensions.code, status(down)]).toEqual(['UNAVAILABLE', 503]);
    const expired = authFailureError(authFailure('expired', 'token expired'));
    expect([expired.extensions.code, expired.extensions.reason, status(expired)]).toEqual(['UNAUTHENTICATED', 'expired', 401]);
  });
  it('throwUnlessOk throws only on refusals', () => {
    expect(() => throwUnlessOk(authorize(who('admin'), 'patchOptions'))).not.toThrow();
    expect(() => throwUnlessOk(authorize(who('admin', 'vc-a'), 'patchOptions'))).toThrow(/system-wide/);
  });
});
