/**
 * Query cost limits: a document may nest at most `maxDepth` fields deep and use at most `maxAliases`
 * aliases, so one request cannot fan out into millions of resolver calls. Body size is capped by the
 * HTTP layer (server.ts). Refusals are ordinary validation errors (GRAPHQL_VALIDATION_FAILED, as Apollo
 * labels every validation error), the same over HTTP and WebSocket.
 */
import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql';

export interface QueryLimits {
  /** Deepest field nesting (default 12; the deepest useful query is about 6). */
  maxDepth: number;
  /** Most aliases in one document (default 30). */
  maxAliases: number;
}

export const DEFAULT_LIMITS: QueryLimits = { maxDepth: 12, maxAliases: 30 };

export function limitRules(limits: QueryLimits = DEFAULT_LIMITS): ValidationRule[] {
  return [depthRule(limits.maxDepth), aliasRule(limits.maxAliases)];
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
