/**
 * The document budget (src/api/limits.ts) against the bombs of issue 12, without a server: every
 * refusal comes in time linear in the document, never from a stack overflow, and a document the budget
 * lets through is one graphql's own validation can handle.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { buildSchema } from '../../src/api/schema.ts';
import { ANONYMOUS_LIMITS, checkDocument, DEFAULT_LIMITS, usesIntrospection, type QueryLimits } from '../../src/api/limits.ts';
import { chain, fanOut } from '../helpers/bombs.ts';

const gql = createRequire(import.meta.url)('graphql') as typeof import('graphql');
const schema = buildSchema();

function timed(q: string, limits: QueryLimits) {
  return { r: checkDocument(schema, q, limits) };
}

const limitOf = (r: ReturnType<typeof checkDocument>) => (r.ok ? 'ok' : (r.error.extensions.limit ?? r.error.extensions.code));

describe('bombs are refused by a limit computed linearly (memoised through fragments), never by a stack overflow', () => {
  it('the 8-level fragment fan-out (10^8 fields once expanded) is refused by cost, or by the fragment count without a token', () => {
    const bomb = fanOut(8, 10);
    expect(bomb.length).toBeLessThan(820);
    for (const [limits, want] of [
      [DEFAULT_LIMITS, 'cost'],
      [ANONYMOUS_LIMITS, 'fragments'],
    ] as const) {
      const { r } = timed(bomb, limits);
      expect(limitOf(r)).toBe(want);
    }
    // The same with aliases in the leaf: Armor's alias count is memoised too.
    const aliased = timed(fanOut(8, 10, 'a: version { version } b: version { version }'), {
      ...DEFAULT_LIMITS,
      maxCost: Number.MAX_VALUE,
      maxSelections: Number.MAX_VALUE,
    });
    expect(limitOf(aliased.r)).toBe('aliases');
  });

  it('deeper and wider fan-outs cost no more to refuse', () => {
    for (const [levels, width] of [
      [12, 10],
      [30, 3],
      [99, 2],
    ] as const) {
      const { r } = timed(fanOut(levels, width), { ...DEFAULT_LIMITS, maxTokens: 100_000, maxFragments: 1000 });
      expect(limitOf(r), `${levels}x${width}`).toBe('cost');
    }
  });

  it('a chain of 4,000 fragments (146 KB+) is a typed refusal, not a stack overflow', () => {
    const q = chain(4000);
    expect(q.length).toBeGreaterThan(146_000);
    // graphql 16.15's own NoFragmentCycles and OverlappingFieldsCanBeMerged rules, and GraphQL Armor's
    // depth/alias/directive rules, each overflow the stack on it (measured when this was written).
    for (const limits of [DEFAULT_LIMITS, ANONYMOUS_LIMITS]) {
      const { r } = timed(q, limits);
      expect(limitOf(r)).toBe('tokens');
    }
    // With the token bound lifted, the fragment count still stops it before any recursive rule.
    expect(limitOf(checkDocument(schema, q, { ...DEFAULT_LIMITS, maxTokens: 1e6 }))).toBe('fragments');
    // And with both lifted, the cost walk (iterative over fragments) does not overflow either.
    expect(limitOf(checkDocument(schema, q, { ...DEFAULT_LIMITS, maxTokens: 1e6, maxFragments: 1e6, maxCost: 100 }))).toBe('cost');
  });

  it('what the budget lets through, graphql validates without overflowing', () => {
    const longest = chain(99); // as long as the fragment count allows
    const r = checkDocument(schema, longest, { ...DEFAULT_LIMITS, maxTokens: 10_000, maxSelections: 1000 });
    expect(r.ok).toBe(true);
    if (r.ok) expect(gql.validate(schema, r.document)).toEqual([]);
  });

  it("selection sets wider than graphql's field merging can afford are refused, fragments included", () => {
    const frags = Array.from({ length: 5 }, (_, i) => `fragment G${i} on Query { ${'version{version} '.repeat(95)} }`);
    const side = `{ ${frags.map((_, i) => `...G${i}`).join(' ')} } ${frags.join(' ')}`;
    expect(limitOf(checkDocument(schema, side, DEFAULT_LIMITS))).toBe('selections');
    expect(limitOf(checkDocument(schema, `{ ${'version{version} '.repeat(65)} }`, DEFAULT_LIMITS))).toBe('selections');
    expect(limitOf(checkDocument(schema, `{ ${'version{version} '.repeat(64)} }`, DEFAULT_LIMITS))).toBe('ok');
  });

  it('deep nesting is refused before the recursive parser sees it', () => {
    for (const q of [`{ ${'a { '.repeat(5000)}${'} '.repeat(5000)} }`, `{ component(id: ${'['.repeat(20_000)}) { id } }`]) {
      const { r } = timed(q, { ...DEFAULT_LIMITS, maxTokens: 1e6 });
      expect(limitOf(r)).toBe('nesting');
    }
  });

  it('syntax errors are GRAPHQL_PARSE_FAILED', () => {
    expect(limitOf(checkDocument(schema, '{ version { ', DEFAULT_LIMITS))).toBe('GRAPHQL_PARSE_FAILED');
    expect(limitOf(checkDocument(schema, '\u0000', DEFAULT_LIMITS))).toBe('GRAPHQL_PARSE_FAILED');
  });
});

describe('ordinary documents', () => {
  it('pass, with the counts the old rules had', () => {
    expect(
      limitOf(checkDocument(schema, '{ components { edges { node { desiredState { bootArtifacts { kernel } } } } } }', DEFAULT_LIMITS)),
    ).toBe('ok');
    expect(
      limitOf(
        checkDocument(schema, '{ components { edges { node { desiredState { bootArtifacts { kernel } } } } } }', {
          ...DEFAULT_LIMITS,
          maxDepth: 5,
        }),
      ),
    ).toBe('depth');
    expect(limitOf(checkDocument(schema, '{ components(first: 10000) { nodes { id enabled } } }', DEFAULT_LIMITS))).toBe('ok');
    expect(
      limitOf(checkDocument(schema, 'query($n: Int) { components(first: $n) { nodes { id } } }', { ...DEFAULT_LIMITS, maxCost: 10_000 })),
    ).toBe('cost');
    expect(limitOf(checkDocument(schema, gql.getIntrospectionQuery(), DEFAULT_LIMITS))).toBe('ok');
    expect(limitOf(checkDocument(schema, '{ version { version } health { api database queue } }', ANONYMOUS_LIMITS))).toBe('ok');
    expect(limitOf(checkDocument(schema, `{ ${'version @include(if: true) { version } '.repeat(6)} }`, ANONYMOUS_LIMITS))).toBe(
      'directives',
    );
  });

  it('introspection is recognised through fragments, __typename is not introspection', () => {
    const doc = (q: string) => gql.parse(q);
    expect(usesIntrospection(doc('{ __typename version { version } }'))).toBe(false);
    expect(usesIntrospection(doc('{ ...F } fragment F on Query { __schema { types { name } } }'))).toBe(true);
    expect(usesIntrospection(doc('{ __type(name: "Query") { name } }'))).toBe(true);
  });
});
