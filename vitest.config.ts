import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more files at once only makes each slower and the engine tests flakier.
    maxWorkers: 2,
    fileParallelism: true,
    reporters: ['default'],
  },
});
