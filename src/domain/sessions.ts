/**
 * createSession's input checks (reference §2 "POST /v2/sessions steps" 2-4): name, limit size and
 * syntax, session_limit_required, and the NID check on limit tokens. The template lookup, its boot
 * set checks and the name conflict need the database and live in the API layer.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AGE_RE, isAge, MAX_AGE_MESSAGE } from './age.ts';
import { checkLimitSyntax, isNoLimit } from './limit.ts';
import { looksLikeNid } from './xname.ts';
import { checkRolloutPolicy, type RolloutPolicy } from './rollout-policy.ts';
import { fail, nameSchema, ok, text, zodIssues, type Checked, type Issue } from './validation.ts';
import type { SessionOperationName } from './templates.ts';

export type SessionStateName = 'pending' | 'running' | 'complete';
export type SessionOperation = 'boot' | 'reboot' | 'shutdown' | 'rescue' | 'unrescue';

/** What a session asks of one node: its boot artifacts and configuration. */
export interface DesiredState {
  kernel: string;
  kernelParameters: string;
  initrd: string;
  configuration: string;
}

export interface CreateSessionDraft {
  operation: SessionOperationName;
  templateName: string;
  name?: string | null;
  limit?: string | null;
  stage?: boolean | null;
  includeDisabled?: boolean | null;
  rollout?: Record<string, unknown> | null;
}

export interface NewSession {
  name: string;
  operation: SessionOperationName;
  templateName: string;
  /** '' when no limit was given (BOS stores null as ''). */
  limit: string;
  stage: boolean;
  includeDisabled: boolean;
  /** The session's own rollout overrides (merged with the template's later). */
  rollout: RolloutPolicy | null;
}

export interface SessionRules {
  sessionLimitRequired: boolean;
  rejectNids: boolean;
}

const draftSchema = z.object({
  templateName: nameSchema,
  name: nameSchema.nullish(),
  limit: text(0, 524_288).nullish(),
});

export function checkCreateSession(d: CreateSessionDraft, rules: SessionRules, newName: () => string = randomUUID): Checked<NewSession> {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const parsed = draftSchema.safeParse({ templateName: d.templateName, name: d.name, limit: d.limit });
  if (!parsed.success) errors.push(...zodIssues(parsed.error));
  const limit = d.limit ?? '';
  if (rules.sessionLimitRequired && limit.trim() === '') {
    errors.push({ field: 'limit', message: 'a limit is required (option session_limit_required); use "*" for every node' });
  }
  if (!isNoLimit(limit)) {
    const problem = checkLimitSyntax(limit);
    if (problem) errors.push({ field: 'limit', message: `invalid limit: ${problem}` });
    limit.split(',').forEach((t, i) => {
      if (!looksLikeNid(t)) return;
      const issue = {
        field: 'limit',
        message: `token ${i + 1} ("${t.trim().slice(0, 40)}") looks like a NID; limits take xnames, groups and roles`,
      };
      (rules.rejectNids ? errors : warnings).push(issue);
    });
  }
  if (d.stage && (d.operation === 'rescue' || d.operation === 'unrescue')) {
    errors.push({ field: 'stage', message: `a ${d.operation} acts on the nodes now; it cannot be staged` });
  }
  const rollout = checkRolloutPolicy(d.rollout ?? null);
  if (!rollout.ok) errors.push(...rollout.errors);
  if (errors.length || !rollout.ok) return fail(errors, warnings);
  return ok(
    {
      name: d.name ?? newName(),
      operation: d.operation,
      templateName: d.templateName,
      limit,
      stage: d.stage ?? false,
      includeDisabled: d.includeDisabled ?? false,
      rollout: rollout.value,
    },
    warnings,
  );
}

export interface SessionAgeFilter {
  status?: SessionStateName | null;
  minAge?: string | null;
  maxAge?: string | null;
}

/** Age filters are BOS age strings (`0`, `30m`, `12h`, `7d`, `2w`). */
export function checkAgeFilter(f: SessionAgeFilter): Issue[] {
  const errors: Issue[] = [];
  for (const k of ['minAge', 'maxAge'] as const) {
    const v = f[k];
    if (v != null && !AGE_RE.test(v))
      errors.push({ field: k, message: `must be an age like 0, 30m, 12h, 7d or 2w (got "${v.slice(0, 20)}")` });
    else if (v != null && !isAge(v)) errors.push({ field: k, message: `${MAX_AGE_MESSAGE} (got "${v.slice(0, 20)}")` });
  }
  return errors;
}
