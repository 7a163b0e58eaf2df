import { pathToFileURL } from 'node:url';

/**
 * How a module file starts as a worker thread: the file itself once compiled (dist/), or under tsx
 * (tests, development: a `.ts` file) a loader first, as Node 20 does not apply the `--import` hooks
 * of the main thread to a worker's own imports. Pass `code` and `eval` to `new Worker`.
 */
export function workerEntry(script: string): { code: string; eval: boolean } {
  if (!/\.[cm]?ts$/.test(script)) return { code: script, eval: false };
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(pathToFileURL(script).href);
  const code = `import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return { code, eval: true };
}
