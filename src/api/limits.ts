/**
 * Query cost limits: a document may nest at most `maxDepth` fields deep, use at most `maxAliases`
 * aliases, and cost at most `maxCost` (fields times page sizes), so one request cannot fan out into
 * millions of resolver calls. Body size is capped by the
 * HTTP layer (server.ts). Refusals are ordinary validation errors (GRAPHQL_VALIDATION_FAILED, as Apollo
 * labels every validation error), the same over HTTP and WebSocket.
 */
import {
  GraphQLError, Kind, type ASTVisitor, type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType,
  type GraphQLOutputType, type SelectionSetNode, type ValidationContext, type ValidationRule,
} from 'graphql';

export interface QueryLimits {
  /** Deepest field nesting (default 12; the deepest useful query is about 6). */
  maxDepth: number;
  /** Most aliases in one document (default 30). */
  maxAliases: number;
  /**
   * Highest estimated cost of one operation (default 1,000,000): every field costs 1, and the fields
   * under a paged field count `first` times (a variable `first` counts as the largest page, 10,000).
   * A full 10,000-node page of components with every field costs about 400,000.
   */
  maxCost: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 12, maxAliases: 30, maxCost: 1_000_000 };

export function limitRules(limits: Partial<QueryLimits> = DEFAULT_LIMITS): ValidationRule[] {
  const l = { ...DEFAULT_LIMITS, ...limits };
  return [depthRule(l.maxDepth), aliasRule(l.maxAliases), costRule(l.maxCost)];
}

function depthRule(max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of context.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    const depth = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
      if (!set) return 0;
      let deepest = 0;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          if (s.name.value.startsWith('__')) continue;
          deepest = Math.max(deepest, 1 + depth(s.selectionSet, seen));
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          deepest = Math.max(deepest, depth(s.selectionSet, seen));
        } else {
          const f = fragments.get(s.name.value);
          if (!f || seen.has(f.name.value)) continue; // cycles are reported by graphql's own rule
          deepest = Math.max(deepest, depth(f.selectionSet, new Set(seen).add(f.name.value)));
        }
        if (deepest > max) return deepest;
      }
      return deepest;
    };
    return {
      OperationDefinition(op) {
        const d = depth(op.selectionSet, new Set());
        if (d > max) {
          context.reportError(new GraphQLError(`query is nested ${d} levels deep; at most ${max} allowed`,
            { nodes: [op], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        }
      },
    };
  };
}

function aliasRule(max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    let count = 0;
    let reported = false;
    return {
      Field(node) {
        if (!node.alias) return;
        count += 1;
        if (count > max && !reported) {
          reported = true;
          context.reportError(new GraphQLError(`query uses more than ${max} aliases`,
            { nodes: [node], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        }
      },
    };
  };
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
 * and under vitest the schema (built by graphql-tools) and this file can hold two copies of graphql.
 */
const unwrap = (t: GraphQLOutputType): GraphQLNamedType => {
  let x: unknown = t;
  while (x && typeof x === 'object' && 'ofType' in x) x = (x as { ofType: unknown }).ofType;
  return x as GraphQLNamedType;
};
const fieldsOf = (t: GraphQLNamedType | undefined): Record<string, GraphQLField<unknown, unknown>> | undefined =>
  t && 'getFields' in t && !('getValues' in t) ? (t.getFields() as Record<string, GraphQLField<unknown, unknown>>) : undefined;

function costRule(max: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const schema = context.getSchema();
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const d of context.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    const cost = (set: SelectionSetNode, type: GraphQLNamedType | undefined, seen: Set<string>): number => {
      let total = 0;
      for (const s of set.selections) {
        if (s.kind === Kind.FIELD) {
          const fields = fieldsOf(type);
          const def = fields && Object.hasOwn(fields, s.name.value) ? fields[s.name.value] : undefined;
          total += 1 + (s.selectionSet ? pageSize(s, def) * cost(s.selectionSet, def ? unwrap(def.type) : undefined, seen) : 0);
        } else if (s.kind === Kind.INLINE_FRAGMENT) {
          total += cost(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) ?? undefined : type, seen);
        } else {
          const f = fragments.get(s.name.value);
          if (!f || seen.has(f.name.value)) continue; // unknown fragments and cycles are graphql's own errors
          total += cost(f.selectionSet, schema.getType(f.typeCondition.name.value) ?? undefined, new Set(seen).add(f.name.value));
        }
        if (total > max) return total;
      }
      return total;
    };
    return {
      OperationDefinition(op) {
        const root = op.operation === 'query' ? schema.getQueryType() : op.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
        const c = cost(op.selectionSet, root ?? undefined, new Set());
        if (c > max) {
          context.reportError(new GraphQLError(`query costs more than ${max.toLocaleString('en')} (fields times page sizes: ${c.toLocaleString('en')} and counting); ask for smaller pages or fewer fields`,
            { nodes: [op], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
        }
      },
    };
  };
}
