import { afterAll, beforeAll, onTestFinished } from 'vitest';

/**
 * Registers what to do to stop something a helper started. Helpers take one so the same server or
 * database can live for one test (the default) or for a whole file, or for a script outside vitest.
 */
export type Defer = (cleanup: () => unknown) => void;

/** Cleans up when the current test ends, passed or failed. */
export const untilTestEnds: Defer = (cleanup) =>
  onTestFinished(async () => {
    await cleanup();
  });

/** Cleanups collected by hand; `close()` runs them last first, every one even when one throws. */
export function cleanupScope(): { defer: Defer; close: () => Promise<void> } {
  const cleanups: (() => unknown)[] = [];
  return {
    defer: (cleanup) => {
      cleanups.push(cleanup);
    },
    close: async () => {
      const errors: unknown[] = [];
      for (const cleanup of cleanups.splice(0).reverse()) {
        try {
          await cleanup();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) throw new AggregateError(errors, `${errors.length} cleanups failed`);
    },
  };
}

/**
 * Builds a fixture once for the file, or for the describe block it is called in, before its first
 * test, and stops what it started after its last. Tests read it through the returned function; they
 * must not change it, since every test of the file sees the same one.
 */
export function oncePerFile<T>(build: (defer: Defer) => Promise<T>): () => T {
  const scope = cleanupScope();
  let built: { value: T } | undefined;
  beforeAll(async () => {
    built = { value: await build(scope.defer) };
  });
  afterAll(() => scope.close());
  return () => {
    if (!built) throw new Error('oncePerFile: the fixture is read before beforeAll built it');
    return built.value;
  };
}
