/**
 * One sync in its own process, for the crash harness: `node --import tsx test/crash/child-sync.ts
 * --upstream URL --db FILE|postgres://… [--webhook-url URL]`. The parent SIGKILLs it at instants aimed from what it prints on stdout,
 * one JSON object a line:
 *   - the run's own pino lines (`"msg":"sync started"`, `"msg":"sync succeeded"`, ...);
 *   - markers `{"marker":"progress","done":n,"total":n}` per page crawled;
 *   - `{"marker":"txn","n":k}` written inside the k-th write transaction (a better-sqlite3
 *     `transaction()`, or a BEGIN IMMEDIATE sent through `exec`), once BEGIN IMMEDIATE holds the lock (on PostgreSQL once BEGIN returned) (1 is beginRun, 2 the commit of the
 *     run), so a kill sent on it lands in or right after that transaction;
 *     `{"marker":"txn-end","n":k}` once it has committed;
 *   - `{"marker":"done","runId":n}` once runSync resolved;
 *   - with `--media-origin ORIGIN --media-dir DIR` the run mirrors media too, and prints
 *     `{"marker":"media-temp","n":k}` / `{"marker":"media-file","n":k}` per download (see markMediaFiles),
 *     and on PostgreSQL `{"marker":"blob","n":k}` per file copied into the database (markPgTransactions).
 * After `done` it waits for stdin to close before exiting, so a kill aimed past the commit still
 * finds the process alive (a crash after the commit is a crash too).
 *
 * Exit codes: 0 success, 9 runSync threw (the error is printed as `{"marker":"error",...}`).
 */
import { writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type Database from 'better-sqlite3';
import pg from 'pg';
import { parsePostgresUrl } from '../../src/config/database-url.js';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore } from '../../src/db/postgres/store.js';
import type { Store } from '../../src/db/store.js';
import { toMirrorError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { MediaStore } from '../../src/media/media-store.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { crashChildInstance } from './child-instance.js';

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
  // A run's commit is written over the SQL port: its BEGIN IMMEDIATE and COMMIT go through exec.
  const exec = sqlite.exec.bind(sqlite);
  let current = 0;
  sqlite.exec = (sql: string) => {
    const result = exec(sql);
    if (sql === 'begin immediate') mark('txn', { n: (current = ++opened) });
    else if (sql === 'commit' && current > 0) mark('txn-end', { n: current });
    if (sql === 'commit' || sql === 'rollback') current = 0;
    return result;
  };
}

/**
 * The same markers on PostgreSQL, where the store's transactions are `begin` … `commit` sent on one
 * pooled client: `txn` once `begin` returned, `txn-end` once `commit` returned. The transactions
 * that copy a media file into the database (putBlob, before the run's commit) are counted apart,
 * as `{"marker":"blob","n":k}` once their `begin` returned, so `txn` 2 is the run's commit on
 * both stores.
 */
function markPgTransactions(store: Store): void {
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const query = Object.getOwnPropertyDescriptor(pg.Client.prototype, 'query')?.value as Query;
  let opened = 0;
  let blobs = 0;
  let copying = 0;
  const open = new WeakMap<pg.Client, number>();
  const after = (result: unknown, then: () => void): unknown =>
    result instanceof Promise ? result.then((value: unknown) => (then(), value)) : result;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0].trim().toLowerCase() : '';
    const result = query.apply(this, args);
    if (text === 'begin' && copying > 0) return after(result, () => mark('blob', { n: ++blobs }));
    if (copying > 0) return result;
    if (text === 'begin') {
      return after(result, () => {
        const n = ++opened;
        open.set(this, n);
        mark('txn', { n });
      });
    }
    if (text === 'commit') return after(result, () => mark('txn-end', { n: open.get(this) ?? 0 }));
    return result;
    // The driver's query has a dozen overloads; this wrapper passes every call through unchanged.
  } as typeof pg.Client.prototype.query;
  const putBlob = store.putBlob.bind(store);
  store.putBlob = async (sha256, path) => {
    copying++;
    try {
      return await putBlob(sha256, path);
    } finally {
      copying--;
    }
  };
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

const onPostgres = parsePostgresUrl(values.db);
const store = onPostgres.ok
  ? await openPgStore(onPostgres.value, { poolMax: 4, instanceId: crashChildInstance(process.pid) })
  : openDatabase(values.db);
// After the open: its migrations' transactions are not the run's.
if ('sqlite' in store) markTransactions(store.sqlite);
else markPgTransactions(store);
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
  await store.close();
}
// Stay alive until the parent closes stdin (or kills us).
process.stdin.resume();
process.stdin.on('end', () => process.stdin.pause());
