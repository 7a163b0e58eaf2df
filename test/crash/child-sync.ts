/**
 * One sync in its own process, for the crash harness: `node --import tsx test/crash/child-sync.ts
 * --upstream URL --db FILE [--webhook-url URL]`. The parent SIGKILLs it at instants aimed from what it prints on stdout,
 * one JSON object a line:
 *   - the run's own pino lines (`"msg":"sync started"`, `"msg":"sync succeeded"`, ...);
 *   - markers `{"marker":"progress","done":n,"total":n}` per page crawled;
 *   - `{"marker":"txn","n":k}` written inside the k-th write transaction, once BEGIN IMMEDIATE
 *     holds the lock (1 is beginRun, 2 the commit of the run), so a kill sent on it lands in
 *     or right after that transaction; `{"marker":"txn-end","n":k}` once it has committed;
 *   - `{"marker":"done","runId":n}` once runSync resolved;
 *   - with `--media-origin ORIGIN --media-dir DIR` the run mirrors media too, and prints
 *     `{"marker":"media-temp","n":k}` / `{"marker":"media-file","n":k}` per download (see markMediaFiles).
 * After `done` it waits for stdin to close before exiting, so a kill aimed past the commit still
 * finds the process alive (a crash after the commit is a crash too).
 *
 * Exit codes: 0 success, 9 runSync threw (the error is printed as `{"marker":"error",...}`).
 */
import { writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type Database from 'better-sqlite3';
import { openDatabase } from '../../src/db/open.js';
import { toMirrorError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { MediaStore } from '../../src/media/media-store.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';

function mark(marker: string, fields: Record<string, unknown> = {}): void {
  // Synchronous, unbuffered: the parent must see a marker before the child moves on.
  writeSync(1, `${JSON.stringify({ marker, ...fields })}\n`);
}

/**
 * Prints `{"marker":"txn","n":k}` inside the k-th write transaction opened on this handle, once
 * BEGIN holds the lock, and `{"marker":"txn-end","n":k}` once it has committed.
 */
function markTransactions(sqlite: Database.Database): void {
  type Body = (...args: unknown[]) => unknown;
  const transaction = sqlite.transaction.bind(sqlite);
  let opened = 0;
  const wrap = (fn: Body): Database.Transaction<Body> => {
    let n = 0;
    const inner = transaction((...args: unknown[]) => {
      n = ++opened;
      mark('txn', { n });
      return fn(...args);
    });
    const ended =
      (variant: Body): Body =>
      (...args) => {
        const result = variant(...args);
        mark('txn-end', { n });
        return result;
      };
    // The variants of better-sqlite3's transaction function are read-only properties: build our own.
    return Object.assign(
      ended((...args) => inner(...args)),
      {
        default: ended((...args) => inner.default(...args)),
        deferred: ended((...args) => inner.deferred(...args)),
        immediate: ended((...args) => inner.immediate(...args)),
        exclusive: ended((...args) => inner.exclusive(...args)),
      },
    );
  };
  sqlite.transaction = wrap;
}

/**
 * With media: `{"marker":"media-temp","n":k}` once the k-th download has its temp file open (a kill
 * then lands mid-write or mid-fsync), `{"marker":"media-file","n":k}` once it is renamed into place.
 */
function markMediaFiles(): void {
  type CreateTemp = (this: MediaStore) => ReturnType<MediaStore['createTemp']>;
  type CommitTemp = (this: MediaStore, path: string, sha256: string) => Promise<boolean>;
  const proto = MediaStore.prototype;
  const createTemp = Object.getOwnPropertyDescriptor(proto, 'createTemp')?.value as CreateTemp;
  const commitTemp = Object.getOwnPropertyDescriptor(proto, 'commitTemp')?.value as CommitTemp;
  let temps = 0;
  let files = 0;
  MediaStore.prototype.createTemp = async function (this: MediaStore) {
    const temp = await createTemp.call(this);
    mark('media-temp', { n: ++temps });
    return temp;
  };
  MediaStore.prototype.commitTemp = async function (this: MediaStore, path: string, sha256: string) {
    const written = await commitTemp.call(this, path, sha256);
    mark('media-file', { n: ++files });
    return written;
  };
}

const { values } = parseArgs({
  options: {
    upstream: { type: 'string' },
    db: { type: 'string' },
    'webhook-url': { type: 'string' },
    // Optional: mirror the media of this origin into this folder.
    'media-origin': { type: 'string' },
    'media-dir': { type: 'string' },
  },
  strict: true,
});
if (values.upstream === undefined || values.db === undefined) {
  process.stderr.write('usage: child-sync.ts --upstream URL --db FILE\n');
  process.exit(2);
}

const store = openDatabase(values.db);
markTransactions(store.sqlite);
const mediaOrigin = values['media-origin'];
const mediaDir = values['media-dir'];
if (mediaOrigin !== undefined) markMediaFiles();
const logger = createLogger({ level: 'info', pretty: false, destination: process.stdout });
try {
  const summary = await runSync(
    syncConfig(values.upstream, {
      SYNC_MAX_PAGES: '100000',
      SYNC_MAX_ENTRIES: '800000',
      UPSTREAM_TIMEOUT: '30s',
      // With --webhook-url, the run also writes its outbox (the webhooks crash campaign checks it).
      ...(values['webhook-url'] === undefined ? {} : { WEBHOOK_URLS: values['webhook-url'] }),
      ...(mediaOrigin !== undefined && mediaDir !== undefined
        ? {
            MEDIA_ORIGINS: mediaOrigin,
            MEDIA_DIR: mediaDir,
            MEDIA_MAX_BYTES: String(10 * 1024 * 1024),
            MEDIA_RUN_MAX_BYTES: String(1024 ** 3),
            MEDIA_TIMEOUT: '30s',
          }
        : {}),
    }),
    {
      store,
      logger,
      onProgress: (done, total) => mark('progress', { done, total }),
    },
  );
  mark('done', { runId: summary.runId, counts: summary.counts });
} catch (thrown) {
  const error = toMirrorError(thrown);
  mark('error', { code: error.code, message: error.message });
  process.exitCode = 9;
} finally {
  store.close();
}
// Stay alive until the parent closes stdin (or kills us).
process.stdin.resume();
process.stdin.on('end', () => process.stdin.pause());
