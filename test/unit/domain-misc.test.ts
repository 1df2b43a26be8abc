import { describe, expect, it } from 'vitest';
import { ageSeconds, formatDuration, isAge, isTtl } from '../../src/domain/age.ts';
import { canonicalXname, isNodeXname, parseComponentId, looksLikeNid } from '../../src/domain/xname.ts';
import { DEFAULT_OPTIONS, optionsPatchSchema, readOptions } from '../../src/domain/options.ts';
import { resolveCountOrPercent, gatesAdmission, checkRolloutPolicy, parseStoredRollout } from '../../src/domain/rollout-policy.ts';
import { Turns, chunks, mapLimit } from '../../src/domain/lists.ts';
import type { EngineComponent } from '../../src/db/components/select.ts';
import { jobRetry, retryLimitHit } from '../../src/engine/action-operator.ts';

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
  it('has the job retry defaults that were constants, and keeps a stored bad one out', () => {
    expect(DEFAULT_OPTIONS).toMatchObject({ job_retry_delay: 1, job_retry_backoff: true, job_retry_max_delay: 5 });
    expect(readOptions({ job_retry_delay: 0, job_retry_backoff: 'yes', job_retry_max_delay: 9 })).toMatchObject({
      job_retry_delay: 1,
      job_retry_backoff: true,
      job_retry_max_delay: 9,
    });
  });
  it.each([
    [{ job_retry_delay: 0 }, 'job_retry_delay'],
    [{ job_retry_delay: 1.5 }, 'job_retry_delay'],
    [{ job_retry_delay: 3601 }, 'job_retry_delay'],
    [{ job_retry_backoff: 'no' }, 'job_retry_backoff'],
    [{ job_retry_max_delay: 0 }, 'job_retry_max_delay'],
    [{ job_retry_max_delay: 86_401 }, 'job_retry_max_delay'],
  ])('rejects %j naming %s', (patch, field) => {
    const r = optionsPatchSchema.safeParse(patch);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual([field]);
  });
  it('takes good job retry values', () => {
    expect(optionsPatchSchema.safeParse({ job_retry_delay: 3600, job_retry_backoff: false, job_retry_max_delay: 86_400 }).success).toBe(
      true,
    );
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
    expect(checkRolloutPolicy({ jobRetryDelay: 2, jobRetryBackoff: false, jobRetryMaxDelay: 60 })).toMatchObject({
      ok: true,
      value: { jobRetryDelay: 2, jobRetryBackoff: false, jobRetryMaxDelay: 60 },
    });
    expect(gatesAdmission({ canary: 5 })).toBe(true);
    expect(gatesAdmission({ maxInFlight: '10%' })).toBe(true);
    expect(gatesAdmission({})).toBe(false);
  });
});

describe('rollout job retry fields', () => {
  it.each([
    [{ jobRetryDelay: 0 }, 'rollout.jobRetryDelay', /at least 1/],
    [{ jobRetryDelay: 2.5 }, 'rollout.jobRetryDelay', /whole number/],
    [{ jobRetryDelay: 3601 }, 'rollout.jobRetryDelay', /at most 3600/],
    [{ jobRetryBackoff: 'true' }, 'rollout.jobRetryBackoff', /.+/],
    [{ jobRetryMaxDelay: 0 }, 'rollout.jobRetryMaxDelay', /at least 1/],
    [{ jobRetryMaxDelay: 86_401 }, 'rollout.jobRetryMaxDelay', /at most 86400/],
  ])('rejects %j naming %s', (input, field, message) => {
    const r = checkRolloutPolicy(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
  });
  it('keeps only the valid stored ones', () => {
    expect(parseStoredRollout({ jobRetryDelay: 0, jobRetryBackoff: false, jobRetryMaxDelay: 7 })).toEqual({
      jobRetryBackoff: false,
      jobRetryMaxDelay: 7,
    });
  });
  const c = { retryPolicy: null, policy: null } as unknown as EngineComponent;
  it.each([
    ['the options', c, {}, { retryLimit: 3, retryDelay: 1, retryBackoff: true, retryMaxDelay: 5 }],
    [
      'options set',
      c,
      { job_retry_delay: 3, job_retry_backoff: false, job_retry_max_delay: 30 },
      { retryDelay: 3, retryBackoff: false, retryMaxDelay: 30 },
    ],
    [
      'the session policy over the options',
      { ...c, policy: { jobRetryDelay: 2, jobRetryBackoff: false, jobRetryMaxDelay: 8 } },
      { job_retry_delay: 3, job_retry_max_delay: 30 },
      { retryDelay: 2, retryBackoff: false, retryMaxDelay: 8 },
    ],
    ['a cap under the delay reads as the delay', { ...c, policy: { jobRetryDelay: 10 } }, {}, { retryDelay: 10, retryMaxDelay: 10 }],
    [
      'a malformed stored field falls back',
      { ...c, policy: { jobRetryDelay: 'x', jobRetryBackoff: 1 } },
      {},
      { retryDelay: 1, retryBackoff: true },
    ],
    ['the retry policy, at most 10', { ...c, retryPolicy: 50 }, {}, { retryLimit: 10 }],
    ['the session retry policy 0', { ...c, retryPolicy: 0 }, {}, { retryLimit: 0 }],
  ])('a job retries with %s', (_what, comp, options, expected) => {
    expect(jobRetry(comp, { ...DEFAULT_OPTIONS, ...options })).toMatchObject(expected);
  });
});

describe('engine base', () => {
  it('chunks by max_component_batch_size, 0 = one chunk', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([1, 2, 3], 0)).toEqual([[1, 2, 3]]);
    expect(chunks([], 5)).toEqual([]);
  });
  it('maps with at most `limit` in flight, in input order; the first failure rejects and starts nothing more', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const slow = async (n: number) => {
      started.push(n);
      inFlight++;
      most = Math.max(most, inFlight);
      await Promise.resolve();
      await Promise.resolve();
      inFlight--;
      if (n === 3) throw new Error('three');
      return n * 10;
    };
    expect(await mapLimit([1, 2, 4, 5, 6], 2, slow)).toEqual([10, 20, 40, 50, 60]);
    expect(most).toBe(2);
    started.length = 0;
    await expect(mapLimit([1, 3, 2, 4, 5, 6, 7], 2, slow)).rejects.toThrow('three');
    expect(started).not.toContain(7);
  });
  it('applies the retry policy (component first, then the default; 0 fails at once)', () => {
    const c = { powerOnAttempts: 2, retryPolicy: null } as any;
    expect(retryLimitHit(c, 'power_on_attempts', { ...DEFAULT_OPTIONS, default_retry_policy: 3 })).toBe(false);
    expect(retryLimitHit({ ...c, powerOnAttempts: 3 }, 'power_on_attempts', DEFAULT_OPTIONS)).toBe(true);
    expect(retryLimitHit({ ...c, powerOnAttempts: 0, retryPolicy: 0 }, 'power_on_attempts', DEFAULT_OPTIONS)).toBe(true);
  });
});

describe('Turns', () => {
  it('at most n at once; the others in arrival order, those asked first ahead; 5,000 waiting hand over in order', async () => {
    const turns = new Turns(2);
    const order: string[] = [];
    const gates: Array<() => void> = [];
    const job = (name: string, first = false) =>
      turns.run(
        () =>
          new Promise<void>((resolve) => {
            order.push(name);
            gates.push(resolve);
          }),
        first,
      );
    const all = [job('a'), job('b'), ...Array.from({ length: 5000 }, (_, i) => job(`r${i}`)), job('A', true), job('B', true)];
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['a', 'b']);
    expect(turns.inUse).toBe(2);
    while (gates.length) {
      gates.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(all);
    expect(order.slice(0, 6)).toEqual(['a', 'b', 'A', 'B', 'r0', 'r1']);
    expect(order.slice(4)).toEqual(Array.from({ length: 5000 }, (_, i) => `r${i}`));
    expect(turns.inUse).toBe(0);
  });
});
