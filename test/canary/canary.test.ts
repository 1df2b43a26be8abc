/**
 * A test that always fails, run only with BOOTORCH_CANARY=1 (vitest.config.ts): .ci/run runs it on each
 * database path and stops unless the runner reports one failure and exits non-zero. A dependency once
 * replaced vitest's exit code with 0; this is the check that would have caught it.
 */
import { expect, it } from 'vitest';

it('fails on purpose (canary)', () => {
  expect('the test runner reports this failure').toBe('ignored');
});
