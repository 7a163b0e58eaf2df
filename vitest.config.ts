import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Deadlines are for hangs, not for slowness: on two cores shared with other jobs a test may take
    // ten times its idle time, and that must make the suite slower, never red. Waits inside tests
    // (test/helpers/patience.ts) end well before this, so a real hang fails naming what it waited for.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // SQLite files and loopback servers are cheap, but two cores are all there is.
    pool: 'forks',
  },
});
