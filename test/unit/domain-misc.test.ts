import { describe, expect, it } from 'vitest';
import { ageSeconds, formatDuration, isAge, isTtl } from '../../src/domain/age.ts';
import { canonicalXname, isNodeXname, parseComponentId, looksLikeNid } from '../../src/domain/xname.ts';
import { DEFAULT_OPTIONS, optionsPatchSchema, readOptions } from '../../src/domain/options.ts';
import { resolveCountOrPercent, gatesAdmission, checkRolloutPolicy } from '../../src/domain/rollout-policy.ts';
import { chunks } from '../../src/domain/lists.ts';
import { retryLimitHit } from '../../src/engine/action-operator.ts';

describe('age strings and durations', () => {
  it.each([
    ['0', 0],
    ['0h', 0],
    ['30m', 1800],
    ['12H', 43200],
    ['7d', 604800],
    ['2w', 1209600],
  ])('%s', (a, s) => {
    expect(ageSeconds(a)).toBe(s);
  });
  it.each(['', '1', '01d', '5y', '-1d'])('rejects %j', (a) => expect(() => ageSeconds(a)).toThrow());
  it('refuses ages past 100 years, down to ones no Date can hold', () => {
    for (const ok of ['36525d', '876600h', '52596000m', '5217w', '0']) expect(isAge(ok), ok).toBe(true);
    for (const no of ['36526d', '5218w', '9999999999d', '99999999999999w', `1${'0'.repeat(400)}m`]) expect(isAge(no), no).toBe(false);
    expect(isTtl('1h')).toBe(true);
    expect(isTtl('9999999999d')).toBe(false);
    expect(optionsPatchSchema.safeParse({ cleanup_completed_session_ttl: '99999999999999w' }).success).toBe(false);
    expect(optionsPatchSchema.safeParse({ component_actual_state_ttl: '9999999999d' }).success).toBe(false);
  });
  it.each([
    [20_000, '0:00:20'],
    [3_600_000 + 61_000, '1:01:01'],
    [93_784_000, '1 day, 2:03:04'],
    [2 * 86_400_000, '2 days, 0:00:00'],
  ])('%d ms prints as %s', (ms, s) => expect(formatDuration(ms)).toBe(s));
});

describe('xnames', () => {
  it.each([
    ['X03000C0S019B01N0', 'x3000c0s19b1n0'],
    [' x1000c3s5b1n0 ', 'x1000c3s5b1n0'],
    ['x0c0s0b0n0', 'x0c0s0b0n0'],
  ])('canonicalises %s', (raw, id) => expect(canonicalXname(raw)).toBe(id));
  it('parses component ids with reasons', () => {
    expect(parseComponentId('x1000c0s0b0n0')).toEqual({ id: 'x1000c0s0b0n0' });
    expect(parseComponentId('nid000001')).toHaveProperty('error');
    expect(parseComponentId('x1000c8s0b0n0')).toHaveProperty('error');
    expect(parseComponentId('')).toHaveProperty('error');
    expect(isNodeXname('x1000c0s0b0')).toBe(false);
    expect(looksLikeNid('&nid0001')).toBe(true);
  });
});

describe('options', () => {
  it('fills defaults and drops unknown or invalid stored values', () => {
    const o = readOptions({ polling_frequency: 5, bogus: 1, default_retry_policy: -3 });
    expect(o.polling_frequency).toBe(5);
    expect(o.default_retry_policy).toBe(3);
    expect(o).not.toHaveProperty('bogus');
    expect(DEFAULT_OPTIONS.max_component_batch_size).toBe(2800);
  });
  it('validates patches with ranges and names the field', () => {
    const r = optionsPatchSchema.safeParse({ bss_read_timeout: 5 });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['bss_read_timeout']);
    expect(optionsPatchSchema.safeParse({ component_actual_state_ttl: '30m' }).success).toBe(false);
    expect(optionsPatchSchema.safeParse({ nope: 1 }).success).toBe(false);
    expect(optionsPatchSchema.safeParse({ polling_frequency: 1 }).success).toBe(true);
  });
});

describe('rollout amounts', () => {
  it.each([
    ['50', 1000, 50],
    ['10%', 1000, 100],
    ['1%', 10, 1],
    ['10%', 5, 1],
  ])('%s of %d', (s, n, r) => {
    expect(resolveCountOrPercent(s, n)).toBe(r);
  });
  it('validates and knows which policies gate admission', () => {
    expect(checkRolloutPolicy({ maxInFlight: '101%' }).ok).toBe(false);
    expect(checkRolloutPolicy({ maxInFlight: '5' }).ok).toBe(true);
    expect(gatesAdmission({ canary: 5 })).toBe(true);
    expect(gatesAdmission({ maxInFlight: '10%' })).toBe(true);
    expect(gatesAdmission({})).toBe(false);
  });
});

describe('engine base', () => {
  it('chunks by max_component_batch_size, 0 = one chunk', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([1, 2, 3], 0)).toEqual([[1, 2, 3]]);
    expect(chunks([], 5)).toEqual([]);
  });
  it('applies the retry policy (component first, then the default; 0 fails at once)', () => {
    const c = { powerOnAttempts: 2, retryPolicy: null } as any;
    expect(retryLimitHit(c, 'power_on_attempts', { ...DEFAULT_OPTIONS, default_retry_policy: 3 })).toBe(false);
    expect(retryLimitHit({ ...c, powerOnAttempts: 3 }, 'power_on_attempts', DEFAULT_OPTIONS)).toBe(true);
    expect(retryLimitHit({ ...c, powerOnAttempts: 0, retryPolicy: 0 }, 'power_on_attempts', DEFAULT_OPTIONS)).toBe(true);
  });
});
