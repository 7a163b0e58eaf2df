import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // SQLite files and loopback servers are cheap, but two cores are all there is.
    pool: 'forks',
  },
});
