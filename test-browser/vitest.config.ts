import { defineConfig } from 'vitest/config';

// The console in a real browser (Debian's Chromium through playwright-core): `npm run test:browser`.
// Kept apart from `npm test`, which needs nothing but Node.
export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test-browser/**/*.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    reporters: ['default'],
  },
});
