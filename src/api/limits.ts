/**
 * What one GraphQL document may cost before it is refused, checked in time linear in its size, before
 * graphql's own validation and before anything executes. One budget per kind of caller: requests
 * without a valid credential get the smallest (ANONYMOUS_LIMITS).
 *
 * The checks, cheapest first; each stops at its limit, so refusing costs at most the limit's worth:
 *   1. tokens and bracket nesting, counted by graphql's lexer without parsing (a deeply nested
 *      document would overflow the recursive parser; a long one costs parse time);
 *   2. parse (graphql's own maxTokens cap as well), then the number of fragment definitions;
 *   3. cost: every field costs 1, and the fields under a paged field count `first` times (given,
 *      else the schema default; a `first` given by variable counts as the largest page), through
 *      fragments, each fragment's cost computed once (memoised, in dependency order, no recursion
 *      across fragments); then the widest selection set, fragments included (graphql's
 *      field-merging rule is quadratic in it);
 *   4. depth, aliases and directives: GraphQL Armor's rules (@escape.tech/graphql-armor-max-*), which
 *      memoise per fragment too, run only on documents the steps above bounded.
 *
 * Why the bounds in 1-2 come first: graphql's own NoFragmentCycles and OverlappingFieldsCanBeMerged
 * rules, and Armor's rules, recurse through fragment spreads; on a chain of 4,000 fragments (146 KB)
 * each of them overflows the stack (a 500), and no validation rule can prevent that, since rules all
 * run in the same pass. The fan-out bomb (8 fragments each spreading the next 10 times, 10^8 fields
 * expanded) is refused by the memoised cost in well under a millisecond.
 *
 * Refusals are 400s: GRAPHQL_PARSE_FAILED for syntax, GRAPHQL_VALIDATION_FAILED for every limit (as
 * Apollo labels validation errors), with `extensions.limit` naming which one.
 */
import { createRequire } from 'node:module';
import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLError as GraphQLErrorType,
  GraphQLField,
  GraphQLNamedType,
  GraphQLOutputType,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
} from 'graphql';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';

/** graphql's CommonJS build: the copy the schema, Apollo, graphql-ws and Armor use (see server.ts). */
const gql = createRequire(import.meta.url)('graphql') as typeof import('graphql');
const { Kind } = gql;

export interface QueryLimits {
  /** Lexical tokens in the document (punctuation, names, values; comments are free). */
  maxTokens: number;
  /** Brackets ({ [ () open at once: what the recursive parser and every rule after it recurse on. */
  maxNesting: number;
  /** Fragment definitions in the document. */
  maxFragments: number;
  /**
   * Fields one selection set collects, with those its fragments bring in at that level. graphql's
   * OverlappingFieldsCanBeMerged compares them pairwise: 5 fragments of 95 fields each, spread side by
   * side, cost it ~360 ms before its own budget gives up; 64 cost it a few ms.
   */
  maxSelections: number;
  /** Deepest field nesting, through fragments (the deepest useful query is about 6). */
  maxDepth: number;
  /** Aliases, counted through fragments (a fragment spread twice counts twice). */
  maxAliases: number;
  /** Directives, counted through fragments. */
  maxDirectives: number;
  /**
   * Highest estimated cost of one operation: every field costs 1, and the fields under a paged field
   * count `first` times (a variable `first` counts as the largest page, 10,000). A full 10,000-node
   * page of components with every field costs about 400,000.
   */
  maxCost: number;
}

/** The budget of an authenticated caller. */
export const DEFAULT_LIMITS: QueryLimits = {
  maxTokens: 2000,
  maxNesting: 48,
  maxFragments: 100,
  maxSelections: 64,
  maxDepth: 12,
  maxAliases: 30,
  maxDirectives: 50,
  maxCost: 1_000_000,
};

/**
 * The budget of a request without a valid credential: enough for `{ version { ... } health { ... } }`
 * (all it can run), nothing more.
 */
export const ANONYMOUS_LIMITS: QueryLimits = {
  maxTokens: 300,
  maxNesting: 12,
  maxFragments: 5,
  maxSelections: 10,
  maxDepth: 4,
  maxAliases: 5,
  maxDirectives: 5,
  maxCost: 100,
};

/** Each limit the smaller of the two: the anonymous budget never exceeds the authenticated one. */
export function atMost(a: QueryLimits, b: QueryLimits): QueryLimits {
  const out = { ...a };
  for (const k of Object.keys(a) as (keyof QueryLimits)[]) out[k] = Math.min(a[k], b[k]);
  return out;
}

export type DocumentCheck = { ok: true; document: DocumentNode } | { ok: false; error: GraphQLErrorType };

export type LimitName = keyof QueryLimits extends `max${infer N}` ? Uncapitalize<N> : never;

function refused(limit: LimitName, message: string): DocumentCheck {
  return { ok: false, error: new gql.GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit } }) };
}

function syntax(e: unknown): DocumentCheck {
  const message = e instanceof Error ? e.message : String(e);
  return { ok: false, error: new gql.GraphQLError(message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } }) };
}

const OPENERS = new Set<string>([gql.TokenKind.BRACE_L, gql.TokenKind.BRACKET_L, gql.TokenKind.PAREN_L]);
const CLOSERS = new Set<string>([gql.TokenKind.BRACE_R, gql.TokenKind.BRACKET_R, gql.TokenKind.PAREN_R]);

/** Step 1: count tokens and bracket nesting with the lexer alone; stops at the first limit passed. */
export function scanDocument(source: string, limits: Pick<QueryLimits, 'maxTokens' | 'maxNesting'>): DocumentCheck | null {
  const lexer = new gql.Lexer(new gql.Source(source));
  let tokens = 0;
  let open = 0;
  try {
    for (let t = lexer.advance(); t.kind !== gql.TokenKind.EOF; t = lexer.advance()) {
      if (++tokens > limits.maxTokens) {
        return refused(
          'tokens',
          `query has more than ${limits.maxTokens.toLocaleString('en')} tokens; send a smaller document (values belong in variables)`,
        );
      }
      if (OPENERS.has(t.kind)) {
        if (++open > limits.maxNesting) return refused('nesting', `query nests brackets more than ${limits.maxNesting} deep`);
      } else if (CLOSERS.has(t.kind)) {
        open--;
      }
    }
  } catch (e) {
    return syntax(e);
  }
  return null;
}

/**
 * The whole check of one document against one budget. `schema` types the cost (page sizes).
 * Never throws: whatever goes wrong is a refusal.
 */
export function checkDocument(schema: GraphQLSchema, source: string, limits: QueryLimits): DocumentCheck {
  const scanned = scanDocument(source, limits);
  if (scanned) return scanned;
  let document: DocumentNode;
  try {
    document = gql.parse(source, { maxTokens: limits.maxTokens });
  } catch (e) {
    return syntax(e);
  }
  return checkParsed(schema, document, limits);
}

/** Steps 2-4 on a parsed document (one whose size the caller already bounded, e.g. by checkDocument). */
export function checkParsed(schema: GraphQLSchema, document: DocumentNode, limits: QueryLimits): DocumentCheck {
  const fragments = document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  if (fragments.length > limits.maxFragments) {
    return refused('fragments', `query defines ${fragments.length} fragments; at most ${limits.maxFragments} allowed`);
  }
  try {
    const costs = operationCosts(schema, document, fragments, limits.maxCost);
    for (const c of costs) {
      if (c > limits.maxCost) {
        return refused(
          'cost',
          `query costs more than ${limits.maxCost.toLocaleString('en')} (fields times page sizes: ${
            Number.isFinite(c) && c < 1e15 ? c.toLocaleString('en') : c.toExponential(2)
          } and counting); ask for smaller pages or fewer fields`,
        );
      }
    }
    const widest = widestSelection(document, fragments);
    if (widest > limits.maxSelections) {
      return refused(
        'selections',
        `query selects ${widest} fields in one selection set (fragments included); at most ${limits.maxSelections} allowed`,
      );
    }
    const errors = gql.validate(schema, document, armorRules(limits));
    if (errors.length) return { ok: false, error: errors[0]! };
  } catch (e) {
    // A stack overflow in a rule: the bounds above make it unlikely, and it is still the caller's
    // document that is too complex, not our failure.
    if (e instanceof RangeError) return refused('nesting', 'query is too deeply nested to analyse');
    throw e;
  }
  return { ok: true, document };
}

const armorCache = new WeakMap<QueryLimits, ValidationRule[]>();

/** Armor's depth, alias and directive rules, reporting (not throwing) in our words. */
function armorRules(limits: QueryLimits): ValidationRule[] {
  const cached = armorCache.get(limits);
  if (cached) return cached;
  const report = (limit: LimitName, say: (found: string) => string) => (context: ValidationContext | null, err: Error) => {
    const found = /found (\d+(?:\.\d+)?(?:e\+\d+)?)/i.exec(err.message)?.[1] ?? '?';
    context?.reportError(new gql.GraphQLError(say(found), { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit } }));
  };
  const common = { exposeLimits: true, propagateOnRejection: false } as const;
  const rules = [
    maxDepthRule({
      ...common,
      n: limits.maxDepth,
      flattenFragments: true,
      onReject: [report('depth', (f) => `query is nested ${f} levels deep; at most ${limits.maxDepth} allowed`)],
    }),
    maxAliasesRule({
      ...common,
      n: limits.maxAliases,
      onReject: [report('aliases', (f) => `query uses more than ${limits.maxAliases} aliases (${f})`)],
    }),
    maxDirectivesRule({
      ...common,
      n: limits.maxDirectives,
      onReject: [report('directives', (f) => `query uses more than ${limits.maxDirectives} directives (${f})`)],
    }),
  ];
  armorCache.set(limits, rules);
  return rules;
}

/** The largest page any paged field serves; a `first` given by variable is assumed to ask for it. */
const LARGEST_PAGE = 10_000;

/** How many times the selections under this field run: its `first` (given, or the schema default), else once. */
function pageSize(node: FieldNode, def: GraphQLField<unknown, unknown> | undefined): number {
  const arg = node.arguments?.find((a) => a.name.value === 'first');
  if (arg?.value.kind === Kind.INT) return Math.max(1, Math.min(LARGEST_PAGE, Number(arg.value.value)));
  if (arg?.value.kind === Kind.VARIABLE) return LARGEST_PAGE;
  const declared = def?.args.find((a) => a.name === 'first')?.defaultValue;
  return typeof declared === 'number' ? Math.max(1, declared) : 1;
}

/*
 * Types are inspected by shape, not with graphql's isObjectType() & co.: those are instanceof checks,
 * and under vitest the schema (built by graphql-tools) and a source file can hold two copies of graphql.
 */
const unwrap = (t: GraphQLOutputType): GraphQLNamedType => {
  let x: unknown = t;
  while (x && typeof x === 'object' && 'ofType' in x) x = (x as { ofType: unknown }).ofType;
  return x as GraphQLNamedType;
};
const fieldsOf = (t: GraphQLNamedType | undefined): Record<string, GraphQLField<unknown, unknown>> | undefined =>
  t && 'getFields' in t && !('getValues' in t) ? (t.getFields() as Record<string, GraphQLField<unknown, unknown>>) : undefined;

/** The fragment names a selection set spreads, directly or in inline fragments and sub-selections (no recursion). */
function spreadsIn(set: SelectionSetNode): string[] {
  const out: string[] = [];
  const stack: SelectionSetNode[] = [set];
  while (stack.length) {
    for (const s of stack.pop()!.selections) {
      if (s.kind === Kind.FRAGMENT_SPREAD) out.push(s.name.value);
      else if (s.selectionSet) stack.push(s.selectionSet);
    }
  }
  return out;
}

/**
 * The cost of every operation, linear in the document: fragments in dependency order (each spread's
 * fragment is done before any fragment spreading it), each walked once. Fragments in a cycle or
 * spreading unknown fragments cost what their known parts cost; graphql's own rules refuse them.
 * Numbers may overflow to Infinity, which is still "more than the limit".
 */
function operationCosts(schema: GraphQLSchema, document: DocumentNode, fragments: FragmentDefinitionNode[], max: number): number[] {
  const byName = new Map(fragments.map((f) => [f.name.value, f]));
  const done = new Map<string, number>();
  const walk = (set: SelectionSetNode, type: GraphQLNamedType | undefined): number => {
    let total = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const fields = fieldsOf(type);
        const def = fields && Object.hasOwn(fields, s.name.value) ? fields[s.name.value] : undefined;
        total += 1 + (s.selectionSet ? pageSize(s, def) * walk(s.selectionSet, def ? unwrap(def.type) : undefined) : 0);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        total += walk(s.selectionSet, s.typeCondition ? (schema.getType(s.typeCondition.name.value) ?? undefined) : type);
      } else {
        total += done.get(s.name.value) ?? 0;
      }
      if (total > max) return total; // enough to refuse
    }
    return total;
  };
  // Depth-first post-order over the spread graph, with an explicit stack (chains can be long).
  const state = new Map<string, 'open' | 'done'>();
  for (const root of fragments) {
    if (state.has(root.name.value)) continue;
    const stack: { name: string; deps: string[]; i: number }[] = [{ name: root.name.value, deps: spreadsIn(root.selectionSet), i: 0 }];
    state.set(root.name.value, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      if (top.i < top.deps.length) {
        const dep = top.deps[top.i++]!;
        const f = byName.get(dep);
        if (!f || state.has(dep)) continue; // unknown, done, or a cycle
        state.set(dep, 'open');
        stack.push({ name: dep, deps: spreadsIn(f.selectionSet), i: 0 });
        continue;
      }
      const f = byName.get(top.name)!;
      done.set(top.name, walk(f.selectionSet, schema.getType(f.typeCondition.name.value) ?? undefined));
      state.set(top.name, 'done');
      stack.pop();
    }
  }
  const costs: number[] = [];
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const op = d as OperationDefinitionNode;
    const root =
      op.operation === 'query'
        ? schema.getQueryType()
        : op.operation === 'mutation'
          ? schema.getMutationType()
          : schema.getSubscriptionType();
    costs.push(walk(op.selectionSet, root ?? undefined));
  }
  return costs;
}

/**
 * The most fields any one selection set collects, counting what its fragment spreads and inline
 * fragments bring in at that level (what graphql's field-merging rule compares pairwise). Each
 * fragment's width is computed once; the recursion follows fragment spreads, at most maxFragments deep
 * (checked before).
 */
function widestSelection(document: DocumentNode, fragments: FragmentDefinitionNode[]): number {
  const byName = new Map(fragments.map((f) => [f.name.value, f]));
  const memo = new Map<string, number>();
  const width = (set: SelectionSetNode): number => {
    let n = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) n += 1;
      else if (s.kind === Kind.INLINE_FRAGMENT) n += width(s.selectionSet);
      else n += fragmentWidth(s.name.value);
    }
    return n;
  };
  const fragmentWidth = (name: string): number => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const f = byName.get(name);
    memo.set(name, 0); // a cycle counts nothing more (graphql refuses it)
    const w = f ? width(f.selectionSet) : 0;
    memo.set(name, w);
    return w;
  };
  let widest = 0;
  const stack: SelectionSetNode[] = [];
  for (const d of document.definitions) if ('selectionSet' in d && d.selectionSet) stack.push(d.selectionSet);
  while (stack.length) {
    const set = stack.pop()!;
    widest = Math.max(widest, width(set));
    for (const s of set.selections) if (s.kind !== Kind.FRAGMENT_SPREAD && s.selectionSet) stack.push(s.selectionSet);
  }
  return widest;
}

/** Whether the document asks for the schema itself (`__schema` or `__type`; `__typename` is fine). */
export function usesIntrospection(document: DocumentNode): boolean {
  const stack: SelectionSetNode[] = [];
  for (const d of document.definitions) if ('selectionSet' in d && d.selectionSet) stack.push(d.selectionSet);
  while (stack.length) {
    for (const s of stack.pop()!.selections) {
      if (s.kind === Kind.FIELD && (s.name.value === '__schema' || s.name.value === '__type')) return true;
      if (s.kind !== Kind.FRAGMENT_SPREAD && s.selectionSet) stack.push(s.selectionSet);
    }
  }
  return false;
}
