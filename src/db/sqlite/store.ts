import type { EndpointKeys } from '../endpoint-keys.js';
import { immutableUri } from '../immutable-uri.js';
import type { SqliteHandle } from './handle.js';
import { toMirrorError } from '../../errors.js';
import { prepared } from '../prepared.js';
import { markRunInactive, runAsSeen } from '../run-liveness.js';
import { PortStore, type StoreDialect } from '../port-store.js';
import { watchSqliteCommits } from './commit-watch.js';
import { beginRun, recoverDeadRuns } from './run-lock.js';
import { openSqliteStage } from './stage.js';
import { pruneSqlite } from './prune.js';
import { outboxPortOf, settle } from './sql-port.js';

/**
 * SQLite under the one store: the lock is a `running` row taken in a write transaction, the media
 * folder beside the file holds the bytes, and commits are polled. Each operation does its work
 * synchronously (SQLite in-process answers in microseconds) and hands back a settled Promise, so
 * callers are written once for every database.
 */
function sqliteDialect(handle: SqliteHandle, endpointKeys: EndpointKeys): StoreDialect {
  const port = outboxPortOf(handle.sqlite);
  return {
    port,
    writes: port,
    outbox: port,
    endpointKeys,
    mapError: null,
    beginRun: (upstream, start, now) => settle(() => beginRun(handle, upstream, start, now)),
    releaseRun: (runId) => settle(() => markRunInactive(handle, runId)),
    recoverDeadRuns: () => settle(() => recoverDeadRuns(handle)),
    /** Read-only connections cannot record a dead holder's end: they only read it as aborted. */
    asSeen: (list) => Promise.resolve(list.map((run) => runAsSeen(handle, run))),
    openStage: (runId) => openSqliteStage(handle, runId),
    mediaDropped: () => Promise.resolve(),
    // Blobs: the media folder beside the database holds the files (src/media/media-store.ts).
    holdsBlobs: false,
    putBlob: () => Promise.resolve(false),
    openBlob: () => Promise.resolve(null),
    keptBlobsWithoutBytes: () => Promise.resolve([]),
    dropUnreferencedBlobs: () => Promise.resolve(0),
    /** The folder is the store here: retention deletes the files itself. */
    droppedBlobs: () => Promise.resolve([]),
    prune: (request) => pruneSqlite(handle, request),
    watchCommits: (onCommit, options) => watchSqliteCommits(handle, onCommit, options),
    file: handle.file,
    databaseProblem: () => settle(() => databaseProblem(handle)),
    storageProblem: () => handle.fileProblem(),
    integrityTarget: handle.immutable ? immutableUri(handle.file) : handle.file,
    readerTarget: { file: handle.file, immutable: handle.immutable },
    close: () => handle.close(),
  };
}

/** Each table with its key (coworkers has no rowid: migration coworkers_without_rowid). */
const PROBED_TABLES = [
  ['runs', 'rowid'],
  ['coworkers', 'uuid'],
  ['versions', 'rowid'],
  ['listing_positions', 'rowid'],
  ['changes', 'rowid'],
  ['options_bodies', 'rowid'],
] as const;

/**
 * A readiness probe of the database: the newest row of every table (one b-tree descent each, so
 * cheap at any size, and the pages a truncated file loses first) and whether the path still names
 * the file opened. Returns what is wrong, or null.
 */
export function databaseProblem(store: SqliteHandle): string | null {
  const moved = store.fileProblem();
  if (moved !== null) return moved;
  try {
    for (const [table, key] of PROBED_TABLES)
      prepared(store.sqlite, `select max(${key}) from ${table}`).get();
    return null;
  } catch (error) {
    return toMirrorError(error).message;
  }
}

/** The one store over a SQLite connection, with the connection beside it for src/db/'s own use. */
export class SqliteStore extends PortStore implements SqliteHandle {
  readonly sqlite: SqliteHandle['sqlite'];
  readonly immutable: boolean;
  readonly fileProblem: () => string | null;
  declare readonly close: () => void;

  constructor(handle: SqliteHandle, endpointKeys: EndpointKeys) {
    super(sqliteDialect(handle, endpointKeys));
    this.sqlite = handle.sqlite;
    this.immutable = handle.immutable;
    this.fileProblem = handle.fileProblem;
  }
}
