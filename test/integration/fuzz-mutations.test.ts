/**
 * Property-based fuzzing of every mutation over real HTTP (and then of every operation type over every
 * transport: queries and mutations over HTTP and graphql-ws, subscriptions over graphql-ws and, refused,
 * over HTTP), with inputs generated from the schema's own
 * argument types: plausible values (existing names and xnames, limit expressions, rollout policies)
 * mixed with hostile ones (wrong types, nulls where values are required, huge strings and lists, bad
 * xnames, malformed limit and age expressions, unicode, NUL and unpaired surrogates, SQL and GraphQL
 * injection). Every answer must be either a success with data, or a typed error (BAD_USER_INPUT names
 * the field) and the database exactly as it was. Never INTERNAL_SERVER_ERROR.
 *
 * Strings include durations at the edge of the representable (`99999999999999w`, `9999999999d`, ages
 * around the largest Date and PostgreSQL timestamp), since those once answered "Invalid time value".
 *
 * FUZZ_RUNS sets the cases per mutation (default 120), FUZZ_RUNS_OTHER those per field and transport
 * of the other sweeps (default 30), FUZZ_SEED the seed; the totals are printed at
 * the end. To chase a failure: FUZZ_ONLY=putComponents (comma list), FUZZ_NO_SHRINK=1 (stop at the
 * first failure), FUZZ_DUMP=/tmp/case.json (the request that answered an internal error).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import type { GraphQLArgument, GraphQLField, GraphQLInputType } from 'graphql';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { startHarness, type GqlResult, type Harness } from './api-harness.ts';
import { randomBytes } from 'node:crypto';
import { NodeRegistry } from '../../src/adapters/standalone/registry.ts';
import { NodeDiscovery } from '../../src/adapters/standalone/discovery.ts';
import { buildSchema } from '../../src/api/schema.ts';

// The CommonJS graphql, the copy graphql-tools built the schema with (see src/api/server.ts).
const { getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isScalarType } = createRequire(import.meta.url)(
  'graphql',
) as typeof import('graphql');

const RUNS = Number(process.env.FUZZ_RUNS ?? 120);
// UNAVAILABLE: the dry run and explain need the outside services, which this harness has not.
const TYPED = new Set(['BAD_USER_INPUT', 'NOT_FOUND', 'CONFLICT', 'PAYLOAD_TOO_LARGE', 'BAD_REQUEST', 'UNAVAILABLE']);
const TABLES = [
  'session_templates',
  'sessions',
  'components',
  'boot_artifacts',
  'options',
  'session_status_snapshots',
  'component_events',
  'tenant_xnames',
  'api_tokens',
];

let h: Harness;
const totals = { cases: 0, accepted: 0, rejected: 0, byCode: {} as Record<string, number> };

/** Existing things, so that a share of the cases reach the success paths and the checks behind them. */
const NODES = ['x1000c0s0b0n0', 'x1000c0s0b0n1', 'x1000c0s1b0n0', 'x3000c0s19b1n0'];
const KNOWN = ['compute', 'sess-1', 'sess-2', 'acme', 'compute-cfg', ...NODES];

const HOSTILE = [
  '',
  ' ',
  '\t',
  "'; drop table components; --",
  "' or '1'='1",
  "x1000c0s0b0n0'--",
  '") { __schema { types { name } } } #',
  '{"$gt": ""}',
  '\\',
  '%',
  '_',
  '*',
  'all',
  '!all',
  '&',
  ',,,',
  '!',
  ',x1000c0s0b0n0,',
  'x1000c0s0b0n0,!x1000c0s0b0n1',
  'compute-a,&compute',
  '&!x1,,!&',
  'nid000001',
  'NID000001',
  'x0c0s0b0n0',
  'x99999c9s9b9n9',
  'x1c8s0b0n0',
  'X1000C0S0B0N0',
  'x1000c0s0b0n0 ',
  'x1000c0s0b0n0\nx1',
  '../../etc/passwd',
  's3://boot-images/x/manifest.json',
  's3://',
  'http://169.254.169.254/',
  '10%',
  '101%',
  '0%',
  '-5',
  '0',
  '1e309',
  'NaN',
  'Infinity',
  '9999999999999999999999',
  '1d',
  '0m',
  '1h2m',
  '52w',
  '-1d',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  'toString',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00x',
  'e\u0301',
  '\u202eevil',
  '😀'.repeat(10),
  'ᚠᛇᚻ᛫ᛒᛦᚦ',
  '<script>alert(1)</script>',
  '$(rm -rf /)',
  '${jndi:ldap://x}',
  '%s%s%s%n',
  'a'.repeat(128),
  'a'.repeat(4096),
];

/**
 * Age and TTL strings (`<n><m|h|d|w>`) at the edge of the representable: around 100 years (the
 * largest accepted), the largest Date (8.64e15 ms), PostgreSQL's timestamp range, and far past them.
 */
const duration: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(
        '0',
        '1',
        '36525',
        '36526',
        '5217',
        '5218',
        '876600',
        '52596000',
        '9999999999',
        '99999999999999',
        '100000000',
        '14285714',
        '1440000000',
        '144000000000',
        '2400000000',
        '8640000000',
        String(2 ** 53),
        '1'.repeat(30),
        '9'.repeat(400),
      ),
      fc.bigInt({ min: 1n, max: 10n ** 22n }).map(String),
    ),
    fc.constantFrom('m', 'h', 'd', 'w', 'M', 'H', 'D', 'W'),
  )
  .map(([n, u]) => `${n}${u}`);

const xname = fc
  .tuple(
    fc.integer({ min: 0, max: 10_000 }),
    fc.integer({ min: 0, max: 9 }),
    fc.integer({ min: 0, max: 70 }),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.boolean(),
  )
  .map(([x, c, s, b, n, upper]) => {
    const id = `x${x}c${c}s${s}b${b}n${n}`;
    return upper ? id.toUpperCase() : id;
  });

const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KNOWN) },
  { weight: 3, arbitrary: duration },
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 4, arbitrary: xname },
  { weight: 2, arbitrary: fc.array(fc.oneof(xname, fc.constantFrom(...KNOWN, '!', '&', 'all')), { maxLength: 6 }).map((a) => a.join(',')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 200_000 }).map((n) => 'a'.repeat(n)) },
);

/** A value of the wrong shape for wherever it lands. */
const wrong: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), { maxKeys: 3 }),
  fc.constant('a'.repeat(70_000)),
);

const int: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -3, max: 100 }) },
  { weight: 1, arbitrary: fc.constantFrom(2147483647, 2147483648, -2147483649, 1e15, 1.5, -0) },
  { weight: 1, arbitrary: fc.integer() },
);

/**
 * Values for a GraphQL input type. `plausible`: always of the type (strings still hostile, since any
 * string is of the type); otherwise sometimes of the wrong type, sometimes null where it is required.
 */
function arbitraryOf(type: GraphQLInputType, plausible: boolean, depth = 0): fc.Arbitrary<unknown> {
  const required = isNonNullType(type);
  const inner = required ? type.ofType : type;
  let right: fc.Arbitrary<unknown>;
  if (isListType(inner)) {
    const elem = arbitraryOf(inner.ofType as GraphQLInputType, plausible, depth + 1);
    const named = getNamedType(inner.ofType);
    const huge = isScalarType(named)
      ? fc.integer({ min: 1000, max: 40_000 }).map((n) => Array.from({ length: n }, (_, i) => `x1000c${i % 8}s${i >> 3}b0n0`))
      : fc.array(elem, { minLength: 50, maxLength: 200 });
    right = fc.oneof({ weight: 30, arbitrary: fc.array(elem, { maxLength: 4 }) }, { weight: 1, arbitrary: huge });
  } else if (isInputObjectType(inner)) {
    if (depth > 4) return fc.constant({});
    const fields = Object.values(inner.getFields());
    const model = Object.fromEntries(fields.map((f) => [f.name, arbitraryOf(f.type, plausible, depth + 1)]));
    const requiredKeys = fields.filter((f) => isNonNullType(f.type)).map((f) => f.name);
    right = plausible
      ? fc.record(model, { requiredKeys })
      : fc
          .tuple(fc.record(model, { requiredKeys }), fc.option(fc.constantFrom('bogus', '__proto__', 'id'), { freq: 10 }))
          .map(([o, extra]) => (extra ? { ...o, [extra]: 'x' } : o));
  } else if (isEnumType(inner)) {
    const values = fc.constantFrom(...inner.getValues().map((v) => v.name));
    right = plausible ? values : fc.oneof({ weight: 8, arbitrary: values }, { weight: 1, arbitrary: text });
  } else if (inner.name === 'Int') {
    right = int;
  } else if (inner.name === 'Boolean') {
    right = fc.boolean();
  } else if (inner.name === 'Float') {
    right = fc.double();
  } else {
    right = text; // String, ID, DateTime and friends
  }
  if (plausible) return required ? right : fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: fc.constant(null) });
  return fc.oneof(
    { weight: 16, arbitrary: right },
    { weight: 1, arbitrary: wrong },
    { weight: required ? 1 : 3, arbitrary: fc.constant(null) },
  );
}

function document(kind: OpKind, name: string, args: readonly GraphQLArgument[], returns: string): string {
  const vars = args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const pass = args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const selection = ['Boolean', 'Int', 'String', 'ID'].includes(returns) ? '' : '{ __typename }';
  return `${kind} Fuzz${vars ? `(${vars})` : ''} { ${name}${pass ? `(${pass})` : ''} ${selection} }`;
}

type OpKind = 'query' | 'mutation' | 'subscription';
type Transport = 'http' | 'ws';

/**
 * One operation over one transport: its first answer. A subscription that answers nothing within
 * `SUBSCRIBED_MS` is open: accepted.
 */
const SUBSCRIBED_MS = 150;
async function run(
  transport: Transport,
  kind: OpKind,
  doc: string,
  variables: Record<string, unknown>,
): Promise<GqlResult & { open?: boolean }> {
  if (transport === 'http') return h.gql(doc, variables);
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (r: GqlResult & { open?: boolean }) => {
      clearTimeout(timer);
      stop();
      resolve(r);
    };
    const stop = ws.subscribe(
      { query: doc, variables },
      {
        next: (r) => settle({ ...(r as GqlResult), status: 200 }),
        error: (e) =>
          settle({
            status: 0,
            errors: Array.isArray(e)
              ? e
              : [{ message: String((e as { reason?: string }).reason ?? e), extensions: { code: '(socket closed)' } }],
          }),
        complete: () => settle({ status: 200, data: undefined }),
      },
    );
    if (kind === 'subscription') timer = setTimeout(() => settle({ status: 200, open: true }), SUBSCRIBED_MS);
  });
}

/** The property every field gets: data, or typed errors naming their field with the database unchanged. */
async function fuzzField(transport: Transport, kind: OpKind, field: GraphQLField<unknown, unknown>, runs: number): Promise<void> {
  const name = field.name;
  const doc = document(kind, name, field.args, getNamedType(field.type).name);
  const args = (plausible: boolean) =>
    fc.record(Object.fromEntries(field.args.map((a) => [a.name, arbitraryOf(a.type, plausible)])), {
      requiredKeys: plausible ? field.args.filter((a) => isNonNullType(a.type)).map((a) => a.name) : [],
    });
  const vars = fc.oneof(args(true), args(false));
  const refusedOverHttp = kind === 'subscription' && transport === 'http';
  await fc.assert(
    fc.asyncProperty(vars, async (variables) => {
      const before = kind === 'mutation' ? await checksum() : '';
      const r = await run(transport, kind, doc, variables as Record<string, unknown>);
      totals.cases++;
      if (r.open || !r.errors?.length) {
        expect(refusedOverHttp, `${name} ran over HTTP`).toBe(false);
        if (!r.open && kind === 'mutation') expect(r.data?.[name], `${name} answered without data`).not.toBeUndefined();
        totals.accepted++;
        return;
      }
      totals.rejected++;
      if (process.env.FUZZ_DUMP && r.errors.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR')) {
        (await import('node:fs')).writeFileSync(process.env.FUZZ_DUMP, JSON.stringify({ transport, query: doc, variables }));
      }
      for (const e of r.errors) {
        const code = e.extensions?.code ?? '(none)';
        totals.byCode[code] = (totals.byCode[code] ?? 0) + 1;
        const what = `${transport} ${name}: ${JSON.stringify(e).slice(0, 500)} for ${JSON.stringify(variables).slice(0, 300)}`;
        expect(refusedOverHttp ? code === 'BAD_REQUEST' || code === 'BAD_USER_INPUT' : TYPED.has(code), what).toBe(true);
        // graphql gives up after 50 variable errors with one more that names nothing; the 50 name their fields.
        const named = e.extensions?.field !== null || r.errors.some((x) => typeof x.extensions?.field === 'string');
        if (code === 'BAD_USER_INPUT') expect(named && e.extensions?.field !== undefined, `${what}: no field named`).toBe(true);
      }
      if (kind === 'mutation') expect(await checksum(), `${name}: a rejected call changed the database`).toBe(before);
    }),
    { numRuns: runs, seed: Number(process.env.FUZZ_SEED ?? 20261129), endOnFailure: !!process.env.FUZZ_NO_SHRINK },
  );
}

/** One digest of every table the API writes (pg-boss is not involved: the harness kicker only records). */
async function checksum(): Promise<string> {
  const parts = TABLES.map((t) => `select '${t}' as t, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as m from ${t} x`);
  const r = await h.db.pool.query(`select string_agg(t || ':' || m, ',' order by t) as sum from (${parts.join(' union all ')}) s`);
  return r.rows[0].sum as string;
}

let ws: Client;

beforeAll(async () => {
  // With a node registry and discovery, so the standalone inventory's mutations are fuzzed too
  // (schema/nodes.graphql); a BMC a fuzzed target happens to name is given half a second.
  const key = randomBytes(32);
  h = await startHarness({ nodeRegistry: new NodeRegistry(key, new NodeDiscovery({ secretKey: key, timeoutMs: 500 })) });
  ws = createClient({
    url: h.server.wsUrl,
    webSocketImpl: WebSocket,
    lazy: true,
    retryAttempts: 0,
    connectionParams: h.auth.bearer(h.auth.adminToken),
  });
  await h.ok('mutation($c: [ComponentWithIdInput!]!) { putComponents(components: $c) { id } }', { c: NODES.map((id) => ({ id })) });
  await h.ok('mutation { setTenantXnames(tenant: "acme", xnames: ["x1000c0s1b0n0"]) { name } }');
  await h.ok(`mutation { putSessionTemplate(name: "compute", input: { cfs: { configuration: "compute-cfg" }, bootSets: [{ name: "compute",
    path: "s3://boot-images/i/manifest.json", type: "s3", nodeList: ["x1000c0s0b0n0", "x1000c0s0b0n1"] }] }) { template { name } } }`);
  for (const name of ['sess-1', 'sess-2'])
    await h.ok(`mutation { createSession(input: { operation: REBOOT, templateName: "compute", name: "${name}" }) { session { name } } }`);
});
afterAll(async () => {
  console.log(
    `fuzz: ${totals.cases} cases (${RUNS} per mutation over HTTP, ${OTHER_RUNS} per field and transport otherwise): ${totals.accepted} accepted, ${totals.rejected} rejected with a typed error and the database unchanged; codes ${JSON.stringify(totals.byCode)}`,
  );
  await ws?.dispose();
  await h?.close();
});

const schema = buildSchema();
const mutations = Object.values(schema.getMutationType()!.getFields());
const queries = Object.values(schema.getQueryType()!.getFields());
const subscriptions = Object.values(schema.getSubscriptionType()!.getFields());
const only = process.env.FUZZ_ONLY?.split(',');
const chosen = (fields: GraphQLField<unknown, unknown>[]) =>
  fields.filter((f) => !only || only.includes(f.name)).map((f) => [f.name, f] as const);
const OTHER_RUNS = Number(process.env.FUZZ_RUNS_OTHER ?? 30);

describe('fuzzing every mutation', () => {
  test('the schema has mutations to fuzz', () => {
    expect(mutations.length).toBeGreaterThan(20);
  });

  test.each(chosen(mutations))('%s', (_name, m) => fuzzField('http', 'mutation', m, RUNS), 300_000);
});

describe('fuzzing every operation type on every transport', () => {
  test.each(chosen(queries))('query %s over HTTP', (_name, f) => fuzzField('http', 'query', f, OTHER_RUNS), 300_000);
  test.each(chosen(queries))('query %s over graphql-ws', (_name, f) => fuzzField('ws', 'query', f, OTHER_RUNS), 300_000);
  test.each(chosen(mutations))(
    'mutation %s over graphql-ws',
    (_name, f) => fuzzField('ws', 'mutation', f, Math.ceil(OTHER_RUNS / 2)),
    300_000,
  );
  test.each(chosen(subscriptions))(
    'subscription %s over graphql-ws',
    (_name, f) => fuzzField('ws', 'subscription', f, OTHER_RUNS),
    300_000,
  );
  test.each(chosen(subscriptions))(
    'subscription %s over HTTP (refused, typed)',
    (_name, f) => fuzzField('http', 'subscription', f, OTHER_RUNS),
    300_000,
  );
});
