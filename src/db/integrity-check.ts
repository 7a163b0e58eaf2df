import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What `PRAGMA quick_check` said: `ok`, the problems it found (at most `maxErrors`), or no verdict. */
export type IntegrityVerdict =
  { kind: 'ok' } | { kind: 'damaged'; problems: string[] } | { kind: 'unfinished'; reason: string };

// Plain JavaScript evaluated in the worker, so the same text runs from src/ (tests) and dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.file, { readonly: true, fileMustExist: !workerData.file.startsWith('file:') });
  db.pragma('busy_timeout = 5000');
  const rows = db.pragma('quick_check(' + workerData.maxErrors + ')');
  parentPort.postMessage({ rows: rows.map((row) => String(Object.values(row)[0])) });
} catch (error) {
  parentPort.postMessage({ error: String((error && error.message) || error), code: error && error.code });
} finally {
  if (db) db.close();
}`;

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * `PRAGMA quick_check` of a database file (a path, or the `file:` URI it was opened by) on its own connection in a worker thread: it reads every
 * page (seconds on a large file), so it runs off the event loop, and a check still going at
 * `deadlineMs` is stopped and says so rather than holding anything.
 */
export function quickCheck(
  file: string,
  options: { deadlineMs: number; maxErrors?: number; signal?: AbortSignal },
): Promise<IntegrityVerdict> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { file, driver: DRIVER, maxErrors: options.maxErrors ?? 10 },
  });
  return new Promise((resolve) => {
    const timer = setTimeout(
      () =>
        settle({ kind: 'unfinished', reason: `quick_check did not finish within ${options.deadlineMs} ms` }),
      options.deadlineMs,
    );
    const onAbort = () => settle({ kind: 'unfinished', reason: 'stopped' });
    const settle = (verdict: IntegrityVerdict) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(verdict);
    };
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (message: { rows?: string[]; error?: string; code?: unknown }) => {
      if (message.rows === undefined) {
        const reason = message.error ?? 'the check failed';
        // A page too damaged for the check to walk is its answer too.
        const damaged = typeof message.code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(message.code);
        return settle(damaged ? { kind: 'damaged', problems: [reason] } : { kind: 'unfinished', reason });
      }
      const problems = message.rows.filter((row) => row !== 'ok');
      settle(problems.length === 0 ? { kind: 'ok' } : { kind: 'damaged', problems });
    });
    worker.once('error', (error) => settle({ kind: 'unfinished', reason: error.message }));
  });
}
