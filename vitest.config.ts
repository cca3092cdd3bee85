import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    // The controller runs from dist/, built once here (test/support/build.ts); on PGlite, every suite's database
    // starts from one migrated database dumped here (test/support/pglite-template.ts).
    globalSetup: ['test/support/build.ts', 'test/support/pglite-template.ts'],
    pool: 'forks',
    // Two cores: more workers only make the database and broker suites wait on each other.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // expect.poll waits for something a page or a process does next (a script showing a field, a row landing):
    // its 1 s default is a real-time wait that a busy 2-core CI machine misses. A poll that passes returns at
    // once, so a longer ceiling costs nothing unless the test is failing anyway.
    expect: { poll: { timeout: 10_000 } },
  },
});
