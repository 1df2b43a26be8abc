/**
 * The components query's `limit` filter: a BOS limit expression resolved to ids against the inventory
 * (engine/plan.ts limitMembers, the same resolution session setup does). A table pages through the
 * same search many times, so each expression's answer is kept for a short while in this process.
 */
import { LimitSyntaxError, checkLimitSyntax } from '../domain/limit.ts';
import { limitMembers } from '../engine/plan.ts';
import { errorText } from '../engine/outcome.ts';
import { badInput } from './errors.ts';
import { unavailableError } from './unavailable.ts';
import type { ApiContext } from './context.ts';

const KEEP_MS = 30_000;
const MAX_KEPT = 32;
const kept = new Map<string, { at: number; ids: Promise<Set<string>> }>();

export async function limitIds(ctx: ApiContext, limit: string, field = 'filter.limit'): Promise<Set<string>> {
  const problem = checkLimitSyntax(limit);
  if (problem) throw badInput([{ field, message: problem }]);
  if (!ctx.adapters) throw unavailableError('the inventory is not configured in this API process');
  const now = Date.now();
  const hit = kept.get(limit);
  if (hit && now - hit.at < KEEP_MS) return hit.ids;
  if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
  const ids = limitMembers(ctx.adapters, limit);
  kept.set(limit, { at: now, ids });
  try {
    return await ids;
  } catch (e) {
    kept.delete(limit);
    if (e instanceof LimitSyntaxError) throw badInput([{ field, message: e.message }]);
    throw unavailableError(`the inventory (HSM) did not answer: ${errorText(e)}`);
  }
}
