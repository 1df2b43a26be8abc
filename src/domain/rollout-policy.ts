/**
 * Rollout policy (bootorch, not in BOS): how fast a session walks its nodes. Templates carry defaults,
 * sessions override them field by field; the merged policy is stored on the session (sessions.rollout)
 * and enforced by the engine. Stored as a JSON object with exactly these camelCase keys, only the ones set.
 */
import { z } from 'zod';
import { check, type Checked } from './validation.ts';

const COUNT_RE = /^[1-9][0-9]{0,6}$/;
const PERCENT_RE = /^(?:[1-9][0-9]?|100)%$/;
const BUDGET_RE = /^(?:0|[1-9][0-9]{0,6}|(?:0|[1-9][0-9]?|100)%)$/;
const seconds = z.number().int('must be a whole number').min(0, 'must be at least 0').max(1_048_576, 'must be at most 1048576');

export const rolloutPolicySchema = z
  .object({
    /** Most nodes in flight at once: a count (`50`) or a percentage of the session's nodes (`10%`). */
    maxInFlight: z
      .string()
      .refine((v) => COUNT_RE.test(v) || PERCENT_RE.test(v), 'must be a count like "50" or a percentage from 1% to 100% like "10%"')
      .optional(),
    /** Nodes powered on per wave. */
    powerOnWaveSize: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(1_048_576, 'must be at most 1048576')
      .optional(),
    /** Seconds between power-on waves. */
    powerOnWaveIntervalSeconds: z
      .number()
      .int('must be a whole number')
      .min(0, 'must be at least 0')
      .max(86_400, 'must be at most 86400')
      .optional(),
    /** Nodes taken through first, alone. */
    canary: z.number().int('must be a whole number').min(0, 'must be at least 0').max(1_048_576, 'must be at most 1048576').optional(),
    /** Failures tolerated before the session pauses: a count or a percentage (`0` tolerates none). */
    failureBudget: z.string().regex(BUDGET_RE, 'must be a count like "5" or a percentage from 0% to 100% like "2%"').optional(),
    maxPowerOffWaitTime: seconds.optional(),
    maxPowerOnWaitTime: seconds.optional(),
    maxBootWaitTime: seconds.optional(),
    /** Overrides the option power_unknown_timeout for this session's nodes. */
    powerUnknownTimeout: seconds.optional(),
    retryPolicy: seconds.optional(),
    /** Overrides the option job_retry_delay for this session's action jobs (seconds, 1-3600). */
    jobRetryDelay: z.number().int('must be a whole number').min(1, 'must be at least 1').max(3600, 'must be at most 3600').optional(),
    /** Overrides the option job_retry_backoff. */
    jobRetryBackoff: z.boolean().optional(),
    /** Overrides the option job_retry_max_delay (seconds, 1-86400). */
    jobRetryMaxDelay: z.number().int('must be a whole number').min(1, 'must be at least 1').max(86_400, 'must be at most 86400').optional(),
  })
  .strict();

export type RolloutPolicy = z.infer<typeof rolloutPolicySchema>;

/** A count or a percentage of `total`, rounded up so `10%` of 5 nodes is 1, not 0. */
export function resolveCountOrPercent(value: string, total: number): number {
  if (value.endsWith('%')) return Math.ceil((Number(value.slice(0, -1)) * total) / 100);
  return Number(value);
}

/** Validate an input policy (nulls mean "not given"); `prefix` names the input field in errors. */
export function checkRolloutPolicy(input: Record<string, unknown> | null | undefined, prefix = 'rollout'): Checked<RolloutPolicy | null> {
  if (!input) return { ok: true, value: null, warnings: [] };
  const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== null && v !== undefined));
  const r = check(rolloutPolicySchema, given, prefix);
  if (!r.ok) return r;
  return { ok: true, value: Object.keys(r.value).length ? r.value : null, warnings: [] };
}

/** Stored JSON -> policy; anything malformed is dropped (the engine must never trip on old data). */
export function parseStoredRollout(stored: unknown): RolloutPolicy | null {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(rolloutPolicySchema.shape) as Array<keyof RolloutPolicy>) {
    const v = storedRolloutField(stored, k);
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length ? (out as RolloutPolicy) : null;
}

/** One field of a stored policy, if set and valid (as parseStoredRollout keeps it), without parsing the rest. */
export function storedRolloutField<K extends keyof RolloutPolicy>(stored: unknown, key: K): RolloutPolicy[K] | undefined {
  if (!stored || typeof stored !== 'object') return undefined;
  const v = (stored as Record<string, unknown>)[key];
  return v !== undefined && (rolloutPolicySchema.shape[key] as z.ZodTypeAny).safeParse(v).success ? (v as RolloutPolicy[K]) : undefined;
}

/** The session's effective policy: the template's, overridden field by field. */
export function mergeRollout(base: RolloutPolicy | null, override: RolloutPolicy | null): RolloutPolicy | null {
  const merged = { ...(base ?? {}), ...(override ?? {}) };
  return Object.keys(merged).length ? merged : null;
}

/** Whether a session with this policy queues its nodes at setup (a cap on nodes in flight, or a canary). */
export function gatesAdmission(p: Pick<RolloutPolicy, 'maxInFlight' | 'canary'> | null | undefined): boolean {
  return !!p && (!!p.maxInFlight || (p.canary ?? 0) > 0);
}
