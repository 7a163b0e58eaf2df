import { closeSync, existsSync, openSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { MirrorError, toMirrorError } from '../errors.js';
import { makeFolder } from '../fs/make-folder.js';
import { migrate, refuseNewerSchema } from './migrate.js';
import { recoverDeadRuns } from './sqlite/run-lock.js';
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';
import type { SqliteHandle } from './sqlite/handle.js';
import { sqliteEndpointKeys } from './sqlite/endpoint-keys.js';
import { immutableUri } from './immutable-uri.js';
import { mayWrite, newConnection, readOnlyOnDisk, schemaStanding } from './sqlite/connection.js';

/** An open SQLite mirror database: the store's operations over one connection. */
export interface MirrorDatabase extends SqliteHandle, Store {}

export interface OpenOptions {
  /** Apply pending migrations (default true). Read-only replicas of `serve` still migrate first. */
  migrate?: boolean;
  readonly?: boolean;
  /**
   * Read the file as unchanging, without the -shm file a WAL database needs (and cannot create in a
   * folder it cannot write, as on a read-only mount). Implies readonly.
   */
  immutable?: boolean;
  /**
   * How long a statement waits for another connection's lock (busy_timeout); 5 s unless told. The
   * wait blocks the thread: a server's is kept within its health checks' deadline.
   */
  busyTimeoutMs?: number;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) the mirror database with the pragmas every process must agree on,
 * then applies the committed migrations. The same path runs in the CLI, the server, tests and Docker.
 */
export function openDatabase(file: string, options: OpenOptions = {}): MirrorDatabase {
  // Two processes opening one new file at the same instant (two `start`, or `start` and a `sync`)
  // can meet a lock SQLite does not wait for (the switch to WAL, its recovery): such an attempt is
  // made again, within a bound, instead of failing one of them.
  const deadline = Date.now() + OPEN_BUSY_BUDGET_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return openOnce(file, options);
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      Atomics.wait(SLEEPER, 0, 0, Math.min(25 * attempt, 250));
    }
  }
}

const OPEN_BUSY_BUDGET_MS = 30_000;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

function isBusy(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

function openOnce(file: string, options: OpenOptions): MirrorDatabase {
  let sqlite: Database.Database;
  try {
    if (file !== ':memory:' && !options.readonly && !options.immutable) createPrivately(file);
    sqlite = options.immutable
      ? newConnection(immutableUri(file), { readonly: true })
      : newConnection(file, { readonly: options.readonly ?? false });
  } catch (cause) {
    throw dbError('open', file, cause, { file });
  }
  try {
    // A sync's write transaction can take a moment on a large listing; readers and a second
    // writer wait for it instead of failing with SQLITE_BUSY. First of all: switching a new file
    // to WAL takes a lock too, which another process opening it at the same instant may hold.
    sqlite.pragma(`busy_timeout = ${Math.round(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS)}`);
    // WAL lets `serve` read while a sync commits in another process; NORMAL is durable at each
    // checkpoint and never corrupts on a crash, which is the promise here.
    const readonly = options.readonly === true || options.immutable === true;
    if (!readonly) sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    refuseNewerSchema(sqlite, file);
    const migrated = options.migrate ?? !readonly;
    if (migrated) migrate(sqlite);
    const identity = fileIdentity(file);
    const handle = {
      sqlite,
      file,
      immutable: options.immutable === true,
      fileProblem: () => fileProblem(file, identity),
      close: () => sqlite.close(),
    };
    // The outbox's endpoint ids are keyed under the database's own key; a database without one yet
    // gets it, and the ids written before it are re-keyed (not by an open that leaves it unmigrated).
    const store: MirrorDatabase = new SqliteStore(handle, sqliteEndpointKeys(sqlite, !readonly && migrated));
    // Any process that opens the database tells the truth about runs whose holder died.
    if (!readonly) recoverDeadRuns(store);
    return store;
  } catch (cause) {
    sqlite.close();
    if (cause instanceof MirrorError) throw cause;
    throw dbError('prepare', file, cause, { file, advice: dbAdvice(cause) });
  }
}

function dbError(verb: string, file: string, cause: unknown, details: Record<string, unknown>): MirrorError {
  const message = `cannot ${verb} database ${file}: ${(cause as Error).message}; ${dbAdvice(cause)}`;
  return new MirrorError('DB_ERROR', message, details, { cause });
}

function dbAdvice(cause: unknown): string {
  const advice = toMirrorError(cause).details.advice;
  return typeof advice === 'string' ? advice : 'check DATABASE_PATH, its folder and the disk';
}

/**
 * The history is private to the operator: a new database is created 0600 in a 0700 folder. SQLite
 * gives its -wal and -shm files the database file's own mode, so they are 0600 too. An existing
 * file keeps the mode it has.
 */
function createPrivately(file: string): void {
  makeFolder(dirname(file), 0o700);
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
}

/** The device and inode the path names now, or null (none, or `:memory:`). */
function fileIdentity(file: string): Pick<Stats, 'dev' | 'ino'> | null {
  try {
    return file === ':memory:' ? null : statSync(file);
  } catch {
    return null;
  }
}

function fileProblem(file: string, opened: Pick<Stats, 'dev' | 'ino'> | null): string | null {
  if (opened === null) return null;
  const now = fileIdentity(file);
  if (now === null) return `database file ${file} was deleted while open; restart to use a new one`;
  if (now.dev !== opened.dev || now.ino !== opened.ino) {
    return `database file ${file} was replaced while open (inode ${opened.ino} → ${now.ino}); restart to read the new file`;
  }
  return null;
}

/**
 * Opens the database of a read command (`runs`, `history`, `changes`, `serve`): it must exist (a
 * mistyped --db must not create an empty one that then answers "no runs yet"), and a read-only file
 * or folder is opened read-only instead of failing on the first write.
 */
export function openExistingDatabase(
  file: string,
  options: Pick<OpenOptions, 'busyTimeoutMs'> = {},
): MirrorDatabase {
  if (!existsSync(file)) {
    throw new MirrorError(
      'DB_NOT_FOUND',
      `no database at ${file}; nothing was created. Check --db (or DATABASE_PATH), or run a sync first`,
      { file },
    );
  }
  if (!readOnlyOnDisk(file)) return openDatabase(file, options);
  // A WAL database is read through its -shm file; where that is missing and the folder cannot be
  // written (a read-only mount), SQLite can only read the file as immutable.
  const immutable = !mayWrite(dirname(file)) && !existsSync(`${file}-shm`);
  const store = openDatabase(file, { ...options, readonly: true, migrate: false, immutable });
  if (schemaStanding(store.sqlite).pending > 0) {
    store.close();
    throw new MirrorError(
      'DB_ERROR',
      `database ${file} is read-only and was written by an older version: it needs an upgrade this ` +
        'process cannot write. Open it once with write access (any command migrates it)',
      { file },
    );
  }
  return store;
}
