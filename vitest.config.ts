import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    // The controller runs from dist/, built once here (test/support/build.ts).
    globalSetup: ['test/support/build.ts'],
    pool: 'forks',
    // Two cores: more workers only make the database and broker suites wait on each other.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
