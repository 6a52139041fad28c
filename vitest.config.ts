import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PGlite starts in a few seconds per suite; PostgreSQL suites share one server.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // Vitest's default output, and before its totals what the run left out and why (test/reporter.ts).
    reporters: ['./test/reporter.ts'],
  },
});
