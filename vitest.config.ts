import { defineConfig } from 'vitest/config';

// BOOTORCH_CANARY=1 runs only the deliberately failing test in test/canary (see .ci/run); it is never
// part of the normal run.
const canary = process.env.BOOTORCH_CANARY === '1';

export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/global-setup.ts'],
    include: canary ? ['test/canary/**/*.test.ts'] : ['test/**/*.test.ts'],
    exclude: canary ? [] : ['test/canary/**', '**/node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more files at once only makes each slower and the engine tests flakier.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});
