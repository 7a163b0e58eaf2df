/**
 * How long a test waits for something (a log line, a condition, a page) before failing with what it
 * waited for. Far past what a loaded machine needs, so slowness makes a test slower, never red, and
 * under the test timeout in vitest.config.ts, so a real hang fails naming its wait.
 */
export const WAIT_MS = 300_000;
